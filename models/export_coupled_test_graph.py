#!/usr/bin/env python3
# Run with Debian's python3 (python3-onnx): /usr/bin/python3 models/export_coupled_test_graph.py
# A training graph whose per-example "gradients" are coupled across the
# batch (x − mean over the batch, as batch normalisation in training mode
# makes them): finetune must refuse it.
import onnx
from onnx import helper, TensorProto, numpy_helper
import numpy as np
w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [2])
images = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 2])
labels = helper.make_tensor_value_info("labels", TensorProto.INT64, ["batch"])
grad = helper.make_tensor_value_info("grad.w", TensorProto.FLOAT, ["batch", 2])
loss = helper.make_tensor_value_info("loss", TensorProto.FLOAT, ["batch"])
axes1 = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes1")
nodes = [
    helper.make_node("ReduceMean", ["images"], ["mean"], axes=[0], keepdims=1),
    helper.make_node("Sub", ["images", "mean"], ["centred"]),
    helper.make_node("Add", ["centred", "w"], ["grad.w"]),
    helper.make_node("Mul", ["images", "w"], ["prod"]),
    helper.make_node("ReduceSum", ["prod", "axes1"], ["loss"], keepdims=0),
]
g = helper.make_graph(nodes, "coupled", [w, images, labels], [grad, loss], initializer=[axes1])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, "testdata/training/coupled.onnx")
