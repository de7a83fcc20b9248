# tools/llama-ref.sh — sourced by the bench scripts: builds tools/llama-ref-bench.c against
# the llama.cpp shared libraries in $LLAMA_LIB_DIR (not shipped with Hanzo: e.g.
# `npm pack @node-llama-cpp/linux-x64@3.22.1` and untar, then package/bins/linux-x64, or the
# build/bin of your own llama.cpp built with -DBUILD_SHARED_LIBS=ON).
# llama_ref_build OUT_DIR SOURCE (tools/llama-ref-bench.c): sets $llama_ref to the built binary, or to "" with a message on
# stderr when LLAMA_LIB_DIR is unset or unusable (the callers then skip llama.cpp).
llama_ref_build() {
  llama_ref=
  if [ -z "${LLAMA_LIB_DIR:-}" ]; then
    echo "LLAMA_LIB_DIR not set: llama.cpp columns skipped (see tools/llama-ref.sh)" >&2
    return 0
  fi
  _lib=$(ls "$LLAMA_LIB_DIR"/libllama.so "$LLAMA_LIB_DIR"/libllama.v*.so 2>/dev/null | head -n 1 || true)
  _ggml=$(ls "$LLAMA_LIB_DIR"/libggml.so "$LLAMA_LIB_DIR"/libggml.v*.so 2>/dev/null | head -n 1 || true)
  if [ -z "$_lib" ] || [ -z "$_ggml" ] || [ ! -f "$LLAMA_LIB_DIR/libggml-base.so" ]; then
    echo "no libllama*.so / libggml*.so / libggml-base.so in $LLAMA_LIB_DIR: llama.cpp columns skipped" >&2
    return 0
  fi
  mkdir -p "$1"
  if cc -O2 -o "$1/llama-ref-bench" "$2" "$_lib" "$_ggml" \
        "$LLAMA_LIB_DIR/libggml-base.so" -Wl,-rpath,"$LLAMA_LIB_DIR" -lm; then
    llama_ref="$1/llama-ref-bench"
  else
    echo "cannot build tools/llama-ref-bench.c against $LLAMA_LIB_DIR: llama.cpp columns skipped" >&2
  fi
}
