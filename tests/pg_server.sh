#!/usr/bin/env bash
# pg_server.sh - a throwaway PostgreSQL server for the tests of the PostgreSQL store
# (src/engine/store_pg_test.c, tests/t_pg.sh): Debian's postgresql package, a fresh cluster in
# a temporary folder, owned by and run as an unprivileged user (PostgreSQL refuses to run as
# root, and CI runs as root: then the user "nobody"), listening only on a Unix socket in that
# folder, fsync off (nothing here outlives the test).
#
#   tests/pg_server.sh start STATE    creates the cluster, starts it, prints its libpq URL;
#                                     STATE is a folder of the caller's that remembers where
#                                     the cluster is. Exit 77 (and "SKIP: why" on stdout) when
#                                     PostgreSQL is not installed.
#   tests/pg_server.sh restart STATE  stops the server (fast: clients are cut off) and starts it
#   tests/pg_server.sh stop STATE     stops the server and removes the cluster
#
# CUZK_PG_BIN names the folder of initdb/pg_ctl (default: the newest /usr/lib/postgresql/*/bin).
set -uo pipefail

cmd=${1:-} state=${2:-}
if [ -z "$cmd" ] || [ -z "$state" ]; then
    echo "usage: $0 start|restart|stop STATE_DIR" >&2
    exit 2
fi
bin=${CUZK_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
as=()
if [ "$(id -u)" = 0 ]; then
    as=(runuser -u nobody --)
fi

pg_start() {
    local pgdir=$1
    "${as[@]}" "$bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/server.log" -w -t 60 \
        -o "-c listen_addresses='' -c unix_socket_directories='$pgdir' -c fsync=off -c full_page_writes=off" \
        start > /dev/null
}

case $cmd in
start)
    if [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
        echo "SKIP: PostgreSQL is not installed (no initdb/pg_ctl under /usr/lib/postgresql/*/bin; apt-get install postgresql)"
        exit 77
    fi
    mkdir -p "$state" || exit 1
    # a folder of its own under /tmp: the unprivileged user must be able to reach it
    pgdir=$(mktemp -d /tmp/cuzk-pg.XXXXXX) || exit 1
    [ ${#as[@]} -gt 0 ] && chown nobody "$pgdir"
    echo "$pgdir" > "$state/pgdir"
    if ! "${as[@]}" "$bin/initdb" -D "$pgdir/data" -U cuzk --auth=trust --no-sync -E UTF8 --locale=C \
            > "$pgdir/initdb.log" 2>&1; then
        echo "pg_server.sh: initdb failed:" >&2
        cat "$pgdir/initdb.log" >&2
        exit 1
    fi
    if ! pg_start "$pgdir"; then
        echo "pg_server.sh: the server did not start:" >&2
        tail -20 "$pgdir/server.log" >&2
        exit 1
    fi
    echo "postgresql:///postgres?host=$pgdir&user=cuzk"
    ;;
restart)
    pgdir=$(cat "$state/pgdir") || exit 1
    "${as[@]}" "$bin/pg_ctl" -D "$pgdir/data" -m fast -w stop > /dev/null || exit 1
    pg_start "$pgdir" || { tail -20 "$pgdir/server.log" >&2; exit 1; }
    ;;
stop)
    [ -f "$state/pgdir" ] || exit 0
    pgdir=$(cat "$state/pgdir")
    "${as[@]}" "$bin/pg_ctl" -D "$pgdir/data" -m immediate -w stop > /dev/null 2>&1
    case $pgdir in /tmp/cuzk-pg.*) rm -rf "$pgdir" ;; esac
    rm -f "$state/pgdir"
    ;;
*)
    echo "usage: $0 start|restart|stop STATE_DIR" >&2
    exit 2
    ;;
esac
