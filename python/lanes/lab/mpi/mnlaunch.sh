#!/bin/sh
# Hydra's remote launcher for Mininet hosts (mpiexec -launcher ssh -launcher-exec THIS):
# called as `mnlaunch [options] HOST COMMAND...`, it runs COMMAND inside HOST's namespaces with
# mnexec instead of ssh. $LANES_MPI_HOSTS names a file of "ADDRESS PID IFACE" lines.
while [ $# -gt 0 ]; do
    case "$1" in
        -*) shift ;;
        *) break ;;
    esac
done
host=$1
shift
set -- "$host" "$*"
entry=$(grep "^$1 " "${LANES_MPI_HOSTS:?LANES_MPI_HOSTS not set}") || {
    echo "mnlaunch: unknown host $1" >&2
    exit 255
}
pid=$(echo "$entry" | cut -d' ' -f2)
dev=$(echo "$entry" | cut -d' ' -f3)
exec mnexec -a "$pid" env UCX_TLS=tcp,self UCX_NET_DEVICES="$dev" sh -c "$2"
