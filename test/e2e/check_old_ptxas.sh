#!/usr/bin/env bash
# A CUDA toolkit whose ptxas predates --split-compile: kiln assembles in
# one thread instead and the artifact still gets ptxas's report.
#   check_old_ptxas.sh KILN MODEL WORK
set -euo pipefail
kiln=$1 model=$2 work=$3
ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
[ -n "$ptxas" ] || { echo "skipping: no ptxas"; exit 77; }
root=$(dirname "$(dirname "$ptxas")")
rm -rf "$work" && mkdir -p "$work/toolkit/bin"
cat > "$work/toolkit/bin/ptxas" <<SH
#!/usr/bin/env bash
for a in "\$@"; do
  [ "\$a" = --split-compile ] && { echo "ptxas fatal   : Unknown option '--split-compile'" >&2; exit 1; }
done
exec '$ptxas' "\$@"
SH
chmod +x "$work/toolkit/bin/ptxas"
ln -s "$root/bin/fatbinary" "$work/toolkit/bin/fatbinary"
[ -d "$root/nvvm" ] && ln -s "$root/nvvm" "$work/toolkit/nvvm"
CUDA_ROOT=$work/toolkit "$kiln" compile "$model" -o "$work/model.so" \
  --target=cuda --gpu-arch=sm_90a --report="$work/report.json"
grep -q '"registers"' "$work/report.json"
echo "assembled with a ptxas without --split-compile"
