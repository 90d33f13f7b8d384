# Shared by the bench scripts: where the shared encoders are, and the
# feature files of Fashion-MNIST's halves and test set under bench/out/.
enc="${ENCODERS:-../shared/encoders}"
make --no-print-directory setup build >/dev/null
mkdir -p bench/out
data=/usr/share/datasets/fashion-mnist

# features NAME PART: make bench/out/NAME-PART.arrow if missing; PART is
# private (train rows 30000–59999), public (train rows 0–29999) or test.
features() {
	local out="bench/out/$1-$2.arrow"
	[ -f "$out" ] && return 0
	[ -d "$enc" ] || { echo "bench: no $enc (the shared encoders); set ENCODERS" >&2; exit 1; }
	case "$2" in
		private) bin/dpfeat extract --encoder "$enc/$1.onnx" --data "$data" --split train --offset 30000 --limit 30000 --out "$out" --quiet ;;
		public) bin/dpfeat extract --encoder "$enc/$1.onnx" --data "$data" --split train --limit 30000 --out "$out" --quiet ;;
		test) bin/dpfeat extract --encoder "$enc/$1.onnx" --data "$data" --split test --out "$out" --quiet ;;
	esac
}

# assemble rebuilds bench/RESULTS.md from the committed sections in
# bench/results/, so running one benchmark keeps the others' tables.
assemble() {
	{
		echo "# Benchmark results"
		echo
		echo "Each section is written by the script it names; figures are from the machine and day it states."
		for s in fit shift shift-rule shift-basis shift-small prototypes sweep sweep-runner views finetune finetune-views randp numpy scale extract pipeline runner startup audit; do
			[ -f "bench/results/$s.md" ] && { echo; cat "bench/results/$s.md"; }
		done
	} >bench/RESULTS.md.tmp
	mv bench/RESULTS.md.tmp bench/RESULTS.md
}
