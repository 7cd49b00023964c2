# tools/lib.sh — shell helpers shared by tools/*.sh (source it; it sets no shell options).

# ensure_packages PKG...: install the Debian/Ubuntu packages that are missing, with apt-get when
# running as root, else say which command would install them. Returns 1 when some stay missing.
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        >/dev/null || { echo "apt-get install ${missing[*]} failed" >&2; return 1; }
  else
    echo "missing packages: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install ${missing[*]}" >&2
    return 1
  fi
}

# find_cuda: export CUDA_HOME when unset and a toolkit is at /usr/local/cuda.
find_cuda() {
  if [ -z "${CUDA_HOME:-}" ] && [ -d /usr/local/cuda ]; then export CUDA_HOME=/usr/local/cuda; fi
}

# have_gpu: true when nvidia-smi lists at least one GPU.
have_gpu() {
  command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q "^GPU "
}
