#!/bin/sh
# Privacy invariants checked on the build (TAP): only egress/ sends bytes off the machine,
# and only server/ listens (besides hanzo-aggregator, egress' self-hosted federation
# server); server/ cannot connect anywhere.
#  1. no object file or static library outside egress/ and server/ references a socket,
#     resolver, HTTP or listening symbol (nm -u);
#  2. an executable that references such symbols, or links libsoup (ldd), contains egress
#     (defines hz_egress_upload_release & co.) or server/ (a function of libhzserver.a):
#     libsoup only ever arrives through libhzegress or libhzserver;
#  3. no source outside egress/, server/ and their tests includes libsoup or curl;
#  4. HzDpRelease is opaque (a declaration of one by value does not compile) and
#     hz_dp_release() is the only function in egress/ headers returning one;
#  5. the download channel's request type HzHubFileRef (egress/hub.h, issue 27) likewise:
#     opaque, built only by hz_hub_file_ref_new() (which validates repo, revision, path);
#  6. server/ (issue 25) references only libsoup's server side: no connect, resolver,
#     socket-client or HTTP-client symbol (SoupSession, SoupMessage sending, curl); a
#     control object that calls soup_session_new is caught by the same rule;
#  7. server/ references nothing of the store, the learner or the redactor: what a client
#     sends cannot reach them;
#  8. mcp/ (`hanzo mcp`, issue 25: its client talks on stdin/stdout) has no network code at
#     all: libhzmcp.a and libhzmcpmsg.a reference no socket, connect, listen, resolver,
#     HTTP or D-Bus symbol (a wider list than 1's: every g_socket_*, g_inet_*, send/recv),
#     nothing of egress/ or server/, and no source of mcp/ includes a network header.
# Usage: test-no-network.sh BUILD_DIR SOURCE_DIR
set -u
build=${1:?build dir}
src=${2:?source dir}
n=0
failed=0

ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

# Exact undefined-symbol names (glibc versions stripped) that reach the network.
net_re='^(socket|connect|getaddrinfo|gethostbyname|gethostbyname2|gethostbyname_r|getnameinfo|gethostbyaddr|res_query|res_search|sendto|sendmsg|recvfrom|soup_.*|curl_.*|g_socket_client_.*|g_socket_connect|g_socket_connection_connect.*|g_resolver_.*|g_network_address_.*|g_tcp_connection_.*|bind|listen|accept|accept4|g_socket_bind|g_socket_listen|g_socket_accept|g_socket_listener_.*|g_socket_service_.*|g_threaded_socket_service_.*)$'
# What server/ may reference of those: libsoup's server side (SoupServer, the server
# message, headers and bodies) and a listening socket of its own (bind, listen), nothing that
# connects, resolves or sends a request.
server_ok_re='^(soup_server_.*|soup_message_headers_.*|soup_message_body_.*|soup_header_.*|g_socket_bind|g_socket_listen)$'

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

# server/ and its tests (whose client side uses libsoup's session to reach the server)
server_path () {
  case "$1" in
    "$build"/server/*|"$build"/tests/server/*) return 0 ;;
    *) return 1 ;;
  esac
}

echo "1..10"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hz-no-network-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 1. static libraries and objects outside egress (objects already inside a lib*.a are
#    checked through the archive)
set --
for f in $(find "$build" -type f \( -name '*.o' -o -name '*.a' \) ! -path '*/meson-private/*' ! -path '*/lib*.a.p/*'); do
  egress_path "$f" || server_path "$f" || set -- "$@" "$f"
done
checked=$#
bad=$(net_refs "-u" "$@")
if [ "$checked" -lt 2 ] || [ ! -e "$build/engine/libhzengine.a" ] || [ ! -e "$build/store/libhzstore.a" ]; then
  not_ok "objects outside egress checked ($checked; libhzengine.a and libhzstore.a must exist)"
elif [ -z "$(net_refs "-u" "$build/egress/libhzegress.a")" ]; then
  not_ok "control: the nm check does not see libsoup symbols in libhzegress.a"
elif [ -n "$bad" ]; then
  not_ok "network or listening symbols outside egress/ and server/:"
  echo "$bad" | sed 's/^/#   /'
else
  ok "no network or listening symbol in $checked static libraries/objects outside egress/ and server/ (control: libhzegress.a has them)"
fi

# 2. executables: network symbols or libsoup only where egress code is linked in (defines
#    hz_egress_*, hz_hub_* or hz_aggregator_* functions), server code (defines a function
#    that libhzserver.a defines), or the target is egress' or server's own
server_lib="$build/server/libhzserver.a"
nm -g --defined-only "$server_lib" 2>/dev/null | awk '$2 == "T" { print $3 }' | sort -u > "$tmp/server-defs"
checked=0
bad=""
for f in $(find "$build" -type f -perm -u+x ! -name '*.so*' ! -name '*.sh' ! -path '*/meson-private/*'); do
  head -c 4 "$f" 2>/dev/null | grep -q 'ELF' || continue
  checked=$((checked + 1))
  egress_path "$f" && continue
  server_path "$f" && continue
  # (one nm of the global definitions per executable: on the busy machine nm was most of
  # this test's minutes)
  nm -g --defined-only "$f" 2>/dev/null > "$tmp/exe-defs"
  grep -qE ' T hz_(egress|hub|aggregator)_' "$tmp/exe-defs" && continue
  [ -s "$tmp/server-defs" ] && awk '$2 == "T" { print $3 }' "$tmp/exe-defs" | sort -u |
    comm -12 - "$tmp/server-defs" | grep -q . && continue
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
  ok "$checked executables: network symbols and libsoup only where egress or server/ is linked in"
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
     nm "$cli" | grep -qE ' T hz_server_listen$' &&
     [ -z "$(net_refs "-u" "$build"/tools/hanzo.p/*.o)" ]; then
  ok "positive control: hanzo links libsoup only through egress (hz_hub_download) and server/ (hz_server_listen); its own objects reference no network symbol"
else
  not_ok "hanzo: not linking libsoup through egress/hub.c and server/, or its objects reference network symbols"
fi

# 3. sources
srcs=$(grep -rlE '#\s*include\s*[<"](libsoup/|curl/)' "$src" --include='*.c' --include='*.h' \
        --include='*.cpp' --include='*.hip' 2>/dev/null |
       grep -vE "^$src/(egress|tests/egress|server|tests/server)/" | grep -v '/build' | tr '\n' ' ')
curl_in_server=$(grep -rlE '#\s*include\s*[<"]curl/' "$src/server" 2>/dev/null | tr '\n' ' ')
if [ -n "$srcs" ]; then
  not_ok "sources outside egress/ and server/ include libsoup/curl: $srcs"
elif [ -n "$curl_in_server" ]; then
  not_ok "server/ includes curl: $curl_in_server"
else
  ok "no source outside egress/ and server/ includes libsoup or curl"
fi

# 4. HzDpRelease is opaque, hz_dp_release() its only constructor
cc=${CC:-cc}
flags="-I$src/egress -I$src/engine -I$src/engine/quant -I$src/store $(pkg-config --cflags gio-2.0 2>/dev/null)"
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
# 6. server/: libsoup's server side only; control: an object calling soup_session_new is caught
server_bad () {  # files: network symbols that server_ok_re does not allow
  net_refs "-u" "$@" | awk -v ok="$server_ok_re" '$2 !~ ok'
}
printf '#include <libsoup/soup.h>\nvoid *f (void) { return soup_session_new (); }\n' > "$tmp/client.c"
sflags="$(pkg-config --cflags libsoup-3.0 2>/dev/null)"
if [ ! -e "$server_lib" ]; then
  not_ok "server/libhzserver.a not built"
elif [ -z "$(net_refs "-u" "$server_lib" | awk '$2 ~ /^soup_server_listen/')" ]; then
  not_ok "control: the nm check does not see soup_server_listen in libhzserver.a"
elif ! $cc $sflags -c "$tmp/client.c" -o "$tmp/client.o" 2>"$tmp/client.err" ||
     [ -z "$(server_bad "$tmp/client.o")" ]; then
  not_ok "control: an object calling soup_session_new is not caught ($(head -c 300 "$tmp/client.err"))"
elif [ -n "$(server_bad "$server_lib")" ]; then
  not_ok "server/ references client, connect or resolver symbols:"
  server_bad "$server_lib" | sed 's/^/#   /'
else
  ok "server/ references only libsoup's server side (soup_server_*, headers, bodies) and its listening socket: no connect, resolver or client symbol (control: soup_session_new is caught)"
fi

# 7. server/ uses nothing of the store, the learner or the redactor
defs=""
for lib in "$build/store/libhzstore.a" "$build/learner/libhzlearn.a" "$build/redactor/libhzredact.a"; do
  [ -e "$lib" ] && defs="$defs $(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF >= 3 && $2 ~ /[TDBR]/ { print $3 }')"
done
printf '%s\n' $defs | sort -u > "$tmp/defs"
used=$(nm -u "$server_lib" 2>/dev/null | awk '{ print $NF }' | sort -u | comm -12 - "$tmp/defs" | tr '\n' ' ')
learn_uses_store=$(nm -u "$build/learner/libhzlearn.a" 2>/dev/null | awk '{ print $NF }' | grep -c '^hz_store_')
if [ ! -s "$tmp/defs" ] || [ "${learn_uses_store:-0}" -eq 0 ]; then
  not_ok "control: the store/learner/redactor symbols are not seen (libhzlearn.a should use hz_store_*)"
elif [ -n "$used" ]; then
  not_ok "server/ references the store, learner or redactor: $used"
else
  ok "server/ references nothing of the store, the learner or the redactor (control: the learner's use of the store is seen)"
fi
# 8. mcp/: no network code at all; control: an object calling g_socket_client_new is caught
mcp_re='^(socket|socketpair|connect|bind|listen|accept|accept4|send|sendto|sendmsg|recv|recvfrom|recvmsg|getaddrinfo|gethostbyname.*|getnameinfo|gethostbyaddr|getsockname|getpeername|setsockopt|res_query|res_search|soup_.*|curl_.*|g_socket_.*|g_inet_.*|g_unix_socket_.*|g_network_.*|g_resolver_.*|g_tcp_.*|g_proxy_.*|g_dbus_.*|g_bus_.*|g_tls_.*|g_threaded_socket_service_.*)$'
mcp_bad () {  # files: undefined symbols matching mcp_re
  nm -A -u "$@" 2>/dev/null | awk '{ s = $NF; sub(/@.*/, "", s); print s }' | grep -E "$mcp_re" | sort -u
}
mcp_libs="$build/mcp/libhzmcp.a $build/mcp/libhzmcpmsg.a"
printf '#include <gio/gio.h>\nvoid *f (void) { return g_socket_client_new (); }\n' > "$tmp/mcpctl.c"
for lib in "$build/egress/libhzegress.a" "$server_lib"; do
  nm -g --defined-only "$lib" 2>/dev/null | awk 'NF >= 3 && $2 ~ /[TDBR]/ { print $3 }'
done | sort -u > "$tmp/net-defs"
mcp_uses_net=$(nm -u $mcp_libs 2>/dev/null | awk '{ print $NF }' | sort -u | comm -12 - "$tmp/net-defs" | tr '\n' ' ')
mcp_incs=$(grep -rlE '#\s*include\s*[<"](libsoup/|curl/|sys/socket\.h|netinet/|arpa/|netdb\.h|gio/gnetworking\.h|hub\.h|hanzo-server\.h)' "$src/mcp" 2>/dev/null | tr '\n' ' ')
if [ ! -e "$build/mcp/libhzmcp.a" ] || [ ! -e "$build/mcp/libhzmcpmsg.a" ]; then
  not_ok "mcp/libhzmcp.a or mcp/libhzmcpmsg.a not built"
elif ! $cc $(pkg-config --cflags gio-2.0 2>/dev/null) -c "$tmp/mcpctl.c" -o "$tmp/mcpctl.o" 2>"$tmp/mcpctl.err" ||
     [ -z "$(mcp_bad "$tmp/mcpctl.o")" ]; then
  not_ok "control: an object calling g_socket_client_new is not caught ($(head -c 300 "$tmp/mcpctl.err"))"
elif [ ! -s "$tmp/net-defs" ]; then
  not_ok "control: the symbols of egress/ and server/ are not seen"
elif [ -n "$(mcp_bad $mcp_libs)" ]; then
  not_ok "mcp/ references network symbols: $(mcp_bad $mcp_libs | tr '\n' ' ')"
elif [ -n "$mcp_uses_net" ]; then
  not_ok "mcp/ references egress/ or server/: $mcp_uses_net"
elif [ -n "$mcp_incs" ]; then
  not_ok "mcp/ sources include network headers: $mcp_incs"
else
  ok "mcp/ has no network code: no socket, connect, listen, resolver, HTTP, TLS or D-Bus symbol, nothing of egress/ or server/, no network header (control: g_socket_client_new is caught)"
fi
exit $failed
