#!/bin/sh
# Privacy invariants checked on the build (TAP):
#  1. no object file or static library outside egress/ references a socket, resolver or HTTP
#     symbol (nm -u);
#  2. an executable that references such symbols, or links libsoup (ldd), contains egress
#     (defines hz_egress_upload_release): libsoup only ever arrives through libhzegress;
#  3. no source outside egress/ and tests/egress/ includes libsoup or curl;
#  4. HzDpRelease is opaque (a declaration of one by value does not compile) and
#     hz_dp_release() is the only function in egress/ headers returning one;
#  5. the download channel's request type HzHubFileRef (egress/hub.h, issue 27) likewise:
#     opaque, built only by hz_hub_file_ref_new() (which validates repo, revision, path).
# Usage: test-no-network.sh BUILD_DIR SOURCE_DIR
set -u
build=${1:?build dir}
src=${2:?source dir}
n=0
failed=0

ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

# Exact undefined-symbol names (glibc versions stripped) that reach the network.
net_re='^(socket|connect|getaddrinfo|gethostbyname|gethostbyname2|gethostbyname_r|getnameinfo|gethostbyaddr|res_query|res_search|sendto|sendmsg|recvfrom|soup_.*|curl_.*|g_socket_client_.*|g_socket_connect|g_socket_connection_connect.*|g_resolver_.*|g_network_address_.*|g_tcp_connection_.*)$'

# "file symbol" for every undefined network symbol in the given files (one nm run).
net_refs () {  # $1 = nm flags, then files
  flags=$1
  shift
  [ $# -gt 0 ] || return 0
  nm -A $flags "$@" 2>/dev/null |
    awk 'NF >= 2 && $(NF-1) == "U" { f = $1; sub(/:.*/, "", f); s = $NF; sub(/@.*/, "", s); print f, s }' |
    awk -v re="$net_re" '$2 ~ re' | sort -u
}

egress_path () {
  case "$1" in
    "$build"/egress/*|"$build"/tests/egress/*) return 0 ;;
    *) return 1 ;;
  esac
}

echo "1..7"

# 1. static libraries and objects outside egress (objects already inside a lib*.a are
#    checked through the archive)
set --
for f in $(find "$build" -type f \( -name '*.o' -o -name '*.a' \) ! -path '*/meson-private/*' ! -path '*/lib*.a.p/*'); do
  egress_path "$f" || set -- "$@" "$f"
done
checked=$#
bad=$(net_refs "-u" "$@")
if [ "$checked" -lt 2 ] || [ ! -e "$build/engine/libhzengine.a" ] || [ ! -e "$build/store/libhzstore.a" ]; then
  not_ok "objects outside egress checked ($checked; libhzengine.a and libhzstore.a must exist)"
elif [ -z "$(net_refs "-u" "$build/egress/libhzegress.a")" ]; then
  not_ok "control: the nm check does not see libsoup symbols in libhzegress.a"
elif [ -n "$bad" ]; then
  not_ok "network symbols outside egress/:"
  echo "$bad" | sed 's/^/#   /'
else
  ok "no network symbol in $checked static libraries/objects outside egress/ (control: libhzegress.a has them)"
fi

# 2. executables: network symbols or libsoup only where egress code is linked in (defines
#    hz_egress_*, hz_hub_* or hz_aggregator_* functions) or the target is egress' own
checked=0
bad=""
for f in $(find "$build" -type f -perm -u+x ! -name '*.so*' ! -name '*.sh' ! -path '*/meson-private/*'); do
  head -c 4 "$f" 2>/dev/null | grep -q 'ELF' || continue
  checked=$((checked + 1))
  egress_path "$f" && continue
  nm "$f" 2>/dev/null | grep -qE ' T hz_(egress|hub|aggregator)_' && continue
  syms=$(net_refs "-D -u" "$f" | awk '{ print $2 }' | tr '\n' ' ')
  soup=$(ldd "$f" 2>/dev/null | grep -o 'libsoup[^ ]*' | head -n 1)
  if [ -n "$syms" ] || [ -n "$soup" ]; then
    bad="$bad
#   $f: $syms $soup"
  fi
done
if [ "$checked" -lt 1 ]; then
  not_ok "no executables found to check"
elif [ -n "$bad" ]; then
  not_ok "executables reaching the network or linking libsoup without egress:$bad"
else
  ok "$checked executables: network symbols and libsoup only where egress is linked in"
fi
agg="$build/egress/hanzo-aggregator"
if [ -x "$agg" ] && ldd "$agg" | grep -q libsoup-3.0 && nm "$agg" | grep -qE ' T hz_aggregator_' &&
   [ -n "$(net_refs "-D -u" "$agg")" ]; then
  ok "positive control: the checks see hanzo-aggregator's libsoup link and symbols"
else
  not_ok "positive control failed: $agg missing, not linking libsoup, or its symbols not seen"
fi

cli="$build/tools/hanzo"
if [ ! -x "$cli" ]; then
  ok "# SKIP tools/hanzo not built"
elif ldd "$cli" | grep -q libsoup-3.0 && nm "$cli" | grep -qE ' T hz_hub_download$' &&
     [ -z "$(net_refs "-u" "$build"/tools/hanzo.p/*.o)" ]; then
  ok "positive control: hanzo links libsoup only through egress (hz_hub_download); its own objects reference no network symbol"
else
  not_ok "hanzo: not linking libsoup through egress/hub.c, or its objects reference network symbols"
fi

# 3. sources
srcs=$(grep -rlE '#\s*include\s*[<"](libsoup/|curl/)' "$src" --include='*.c' --include='*.h' \
        --include='*.cpp' --include='*.hip' 2>/dev/null |
       grep -vE "^$src/(egress|tests/egress)/" | grep -v '/build' | tr '\n' ' ')
if [ -n "$srcs" ]; then
  not_ok "sources outside egress/ include libsoup/curl: $srcs"
else
  ok "no source outside egress/ includes libsoup or curl"
fi

# 4. HzDpRelease is opaque, hz_dp_release() its only constructor
cc=${CC:-cc}
flags="-I$src/egress -I$src/engine -I$src/engine/quant -I$src/store $(pkg-config --cflags gio-2.0 2>/dev/null)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hz-opaque-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '#include "dp.h"\nint main (void) { HzDpRelease *r = NULL; return r != NULL; }\n' > "$tmp/ptr.c"
printf '#include "dp.h"\nint main (void) { HzDpRelease r; return (int) sizeof r; }\n' > "$tmp/val.c"
ctors=$(grep -hE '^(const )?HzDpRelease +\*' "$src"/egress/*.h | grep -oE 'hz_[a-z0-9_]+' | sort -u | tr '\n' ' ')
if ! $cc $flags -c "$tmp/ptr.c" -o "$tmp/ptr.o" 2>"$tmp/ptr.err"; then
  not_ok "control: a pointer to HzDpRelease should compile ($(head -c 300 "$tmp/ptr.err"))"
elif $cc $flags -c "$tmp/val.c" -o "$tmp/val.o" 2>/dev/null; then
  not_ok "HzDpRelease can be declared by value: it is not opaque"
elif [ "$ctors" != "hz_dp_release " ]; then
  not_ok "functions returning HzDpRelease*: '$ctors' (only hz_dp_release allowed)"
else
  ok "HzDpRelease is opaque; hz_dp_release() is its only constructor"
fi
# 5. HzHubFileRef is opaque, hz_hub_file_ref_new() its only constructor
printf '#include "hub.h"\nint main (void) { HzHubFileRef r; return (int) sizeof r; }\n' > "$tmp/ref.c"
printf '#include "hub.h"\nint main (void) { HzHubFileRef *r = NULL; return r != NULL; }\n' > "$tmp/refp.c"
ref_ctors=$(grep -hE '^(const )?HzHubFileRef +\*' "$src"/egress/*.h | grep -oE 'hz_[a-z0-9_]+' | sort -u | tr '\n' ' ')
hflags="$flags $(pkg-config --cflags json-glib-1.0 2>/dev/null)"
if ! $cc $hflags -c "$tmp/refp.c" -o "$tmp/refp.o" 2>"$tmp/refp.err"; then
  not_ok "control: a pointer to HzHubFileRef should compile ($(head -c 300 "$tmp/refp.err"))"
elif $cc $hflags -c "$tmp/ref.c" -o "$tmp/ref.o" 2>/dev/null; then
  not_ok "HzHubFileRef can be declared by value: it is not opaque"
elif [ "$ref_ctors" != "hz_hub_file_ref_new " ]; then
  not_ok "functions returning HzHubFileRef*: '$ref_ctors' (only hz_hub_file_ref_new allowed)"
else
  ok "HzHubFileRef is opaque; hz_hub_file_ref_new() is its only constructor"
fi
exit $failed
