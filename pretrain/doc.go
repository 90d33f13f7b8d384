// Package pretrain is DP-RandP's Phase I (Tang et al., "Differentially
// Private Image Classification by Learning Priors from Random Processes",
// NeurIPS 2023, Sec. 3, App. A and F): a feature extractor learns, without
// privacy and without private data, from images of random processes
// (package randproc), by contrastive representation learning; the private
// phases (package finetune: Phase II, the head; Phase III, everything)
// then start from its parameters.
//
// The loss is Wang and Isola's (ICML 2020, "Understanding Contrastive
// Representation Learning through Alignment and Uniformity on the
// Hypersphere", Eq. 4–6 and their reference code), on the L2-normalised
// embeddings x, y of two augmented views of each of B images:
//
//	L_align   = (1/B)·Σ_i ‖x_i − y_i‖₂^α                       (α = 2)
//	L_uniform = log( (1/P)·Σ_{i<j} exp(−t·‖x_i − x_j‖₂²) )      (t = 2, P = B(B−1)/2)
//	L         = L_align + λ·(L_uniform(x) + L_uniform(y))/2     (λ = 1)
//
// computed in Go with its gradient with respect to the embeddings
// (AlignUniform). The network is driven through two ONNX graphs that
// models/export_training_graph.py writes (the pretraining contract,
// Graphs): one maps parameters and images to embeddings, the other takes
// parameters, images and the loss's gradient with respect to the
// embeddings and returns the parameters' gradient, a vector–Jacobian
// product. So the loss, which couples the batch, never needs to be in the
// graph, and any network the exporter supports can be pretrained; the
// parameters keep the names of the whole model's training graph, so the
// pretrained values slot into dpfeat finetune.
package pretrain
