# shellcheck shell=bash
# chaos/cluster.sh — the clustered rig of the chaos soak (issue 29), sourced by chaos/run: three RabbitMQ
# nodes clustered together and a PostgreSQL primary with a synchronous streaming standby, from Debian's
# packages, on ports of their own. docs/chaos.md ("Clustered") explains the rig, its faults and the report.
#
# Every process is found by its pid file and checked against /proc before a signal; nothing is matched by
# pattern. Both servers are made afresh per run and removed by `chaos/run stop` (only directories this
# file created, marked with .chaos-rig).

# RabbitMQ: node i is chaos-c<i>@localhost on AMQP MQC_AMQP_PORTS[i-1], distribution MQC_DIST_PORTS[i-1].
# All outside the single-node soak's ports, the machine's 5672/25672, Linux's ephemeral range
# (32768-60999) and 35672-35682, where every rabbitmqctl call that is not told otherwise binds its
# own distribution port (these nodes' CLI calls bind MQC_CTL_PORTS instead).
MQC_BASE=/var/lib/rabbitmq/jobapi-chaos-cluster
MQC_NODES=3
MQC_AMQP_PORTS=(27672 27673 27674)
MQC_DIST_PORTS=(27682 27683 27684)
MQC_CTL_PORT_MIN=27690
MQC_CTL_PORT_MAX=27699
# Seconds of silence before the other nodes drop a hung (SIGSTOPped) node. Erlang's default, 60, stalled
# confirmed publishes through the healthy nodes 65-71 s in the reference measurements; 15 stalled them
# 16 s. 15 is what the rig runs and what docs/design.md recommends for production: a tick every 3.75 s
# is nothing next to the broker's own traffic, and a node is declared down after 15-18.75 s of silence.
MQC_NET_TICKTIME=15
# As k8s/overlays/prod/rabbitmq.yaml.
MQC_PARTITION_HANDLING=pause_minority
# One scheduler a node: three VMs share two cores with six JVMs and two PostgreSQL servers.
MQC_ERL_ARGS="+S 1:1"
MQC_CLI_TIMEOUT=60

# PostgreSQL: node a and node b (roles move: a starts as the primary). Data under PGC_BASE, outside
# /etc/postgresql, so pg_lsclusters never lists them.
PGC_BASE=/var/lib/postgresql/jobapi-chaos-cluster
PGC_PORT_A=27432
PGC_PORT_B=27433

# ---------------------------------------------------------------- RabbitMQ ---

mqc_name() { echo "chaos-c$1@localhost"; }
mqc_dir() { echo "$MQC_BASE/n$1"; }
mqc_port() { echo "${MQC_AMQP_PORTS[$1 - 1]}"; }
mqc_addresses() {
  local i out=""
  for ((i = 1; i <= MQC_NODES; i++)); do out+="${out:+,}127.0.0.1:$(mqc_port "$i")"; done
  echo "$out"
}

# The whole environment of node i's server and CLI tools, nothing inherited: the system's
# rabbitmq-env.conf names the machine's node, and these nodes share a cookie of their own (HOME).
mqc_env() {
  local d
  d=$(mqc_dir "$1")
  printf '%s\n' \
    "PATH=/usr/sbin:/usr/bin:/sbin:/bin" "LANG=C.UTF-8" "HOME=$MQC_BASE/home" \
    "RABBITMQ_NODENAME=$(mqc_name "$1")" "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1" \
    "RABBITMQ_NODE_PORT=$(mqc_port "$1")" "RABBITMQ_DIST_PORT=${MQC_DIST_PORTS[$1 - 1]}" \
    "RABBITMQ_CTL_DIST_PORT_MIN=$MQC_CTL_PORT_MIN" "RABBITMQ_CTL_DIST_PORT_MAX=$MQC_CTL_PORT_MAX" \
    "RABBITMQ_CONF_ENV_FILE=$d/rabbitmq-env.conf" "RABBITMQ_CONFIG_FILE=$d/rabbitmq.conf" \
    "RABBITMQ_ADVANCED_CONFIG_FILE=$d/advanced.config" "RABBITMQ_ENABLED_PLUGINS_FILE=$d/enabled_plugins" \
    "RABBITMQ_MNESIA_BASE=$d/mnesia" "RABBITMQ_LOG_BASE=$d/log" "RABBITMQ_PID_FILE=$d/pid" \
    "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=$MQC_ERL_ARGS" "ERL_EPMD_ADDRESS=127.0.0.1"
}

# as_mqc I CMD...: CMD as the rabbitmq user with node i's environment, bounded (a stopped node never answers).
as_mqc() {
  local i=$1
  shift
  local -a envs
  mapfile -t envs < <(mqc_env "$i")
  (cd / && as_root timeout "$MQC_CLI_TIMEOUT" runuser -u rabbitmq -- env -i "${envs[@]}" "$@")
}

mqcctl() { local i=$1; shift; as_mqc "$i" /usr/lib/rabbitmq/bin/rabbitmqctl -n "$(mqc_name "$i")" "$@"; }

# alive PID: runs and is no zombie (this machine's init reaps a killed server's pid lazily).
alive() {
  [[ "$1" =~ ^[0-9]+$ && -e /proc/$1 ]] || return 1
  [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]]
}

gone() { ! alive "$1"; }

stopped() { [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" == T ]]; }

# mqc_pid I: node i's VM, from its pid file, checked by its name in the process's environment.
mqc_pid() {
  local f pid
  f="$(mqc_dir "$1")/pid"
  [[ -f "$f" ]] || return 1
  pid=$(<"$f")
  alive "$pid" || return 1
  [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == beam.smp ]] || return 1
  { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qxF "RABBITMQ_NODENAME=$(mqc_name "$1")"
  echo "$pid"
}

# A node the CLI can ask: running and not stopped. The first such, for cluster-wide questions.
mqc_any() {
  local i pid
  for ((i = 1; i <= MQC_NODES; i++)); do
    pid=$(mqc_pid "$i") && ! stopped "$pid" && { echo "$i"; return 0; }
  done
  return 1
}

mqc_start() {
  mqc_pid "$1" >/dev/null && return 0
  rm -f "$(mqc_dir "$1")/pid"
  as_mqc "$1" /usr/lib/rabbitmq/bin/rabbitmq-server -detached </dev/null >/dev/null 2>&1 || true
}

# Waits until node i booted: 240 s, inside the 5 minutes Ctl gives a call. In the 30-minute clustered
# run 15, at a load of 37, a node killed by the soak took about 130 s from rabbitmq-server to "Server
# startup complete", and a 120 s wait called a node that booted dead.
# The node's AMQP listener opens only once it booted ("Ready to start client connection listeners"),
# and a connect to it needs no CLI. The CLI alone (rabbitmqctl wait, then await_startup) called a
# booted node dead twice in fresh-clone CI: its log said "Server startup complete" 88 s into a 240 s
# wait, while the soak's other CLI calls hung on a node it had SIGSTOPped. What the CLI said is kept
# in log/wait.out.
mqc_wait() {
  local deadline=$((SECONDS + 240)) out
  out="$(mqc_dir "$1")/log/wait.out"
  while ((SECONDS < deadline)); do
    tcp_open 127.0.0.1 "$(mqc_port "$1")" && return 0
    mqcctl "$1" -q await_startup --timeout 10 >>"$out" 2>&1 && return 0
    sleep 2
  done
  tail -n 20 "$(mqc_dir "$1")/log/$(mqc_name "$1").log" >&2 2>/dev/null || true
  return 1
}

# Three fresh nodes, booted together, 2 and 3 joined to 1. Nothing is declared before all joined: a
# quorum queue declared earlier keeps fewer members, and 3.10 never grows it.
mqc_up() {
  local i d p
  mqc_down
  for ((i = 1; i <= MQC_NODES; i++)); do
    for p in "$(mqc_port "$i")" "${MQC_DIST_PORTS[$i - 1]}"; do
      tcp_open 127.0.0.1 "$p" && die "port $p is taken by a process the soak did not start"
    done
  done
  step "creating RabbitMQ nodes $(mqc_name 1)..$(mqc_name "$MQC_NODES") on $(mqc_addresses) (files in $MQC_BASE)"
  as_root mkdir -p "$MQC_BASE/home"
  as_root touch "$MQC_BASE/.chaos-rig"
  head -c 30 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | as_root tee "$MQC_BASE/home/.erlang.cookie" >/dev/null
  for ((i = 1; i <= MQC_NODES; i++)); do
    d=$(mqc_dir "$i")
    as_root mkdir -p "$d/mnesia" "$d/log"
    printf 'listeners.tcp.1 = 127.0.0.1:%s\nloopback_users = none\ncluster_partition_handling = %s\n' \
      "$(mqc_port "$i")" "$MQC_PARTITION_HANDLING" | as_root tee "$d/rabbitmq.conf" >/dev/null
    printf '[{kernel, [{net_ticktime, %s}]}, {rabbit, [%s]}].\n' "$MQC_NET_TICKTIME" "$MQ_RABBIT_SETTINGS" \
      | as_root tee "$d/advanced.config" >/dev/null
    printf '[].\n' | as_root tee "$d/enabled_plugins" >/dev/null
    printf 'export ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}"\n' | as_root tee "$d/rabbitmq-env.conf" >/dev/null
  done
  as_root chown -R rabbitmq:rabbitmq "$MQC_BASE"
  as_root chmod 400 "$MQC_BASE/home/.erlang.cookie"
  for ((i = 1; i <= MQC_NODES; i++)); do mqc_start "$i"; done
  for ((i = 1; i <= MQC_NODES; i++)); do
    mqc_wait "$i" || die "$(mqc_name "$i") did not boot (logs in $(mqc_dir "$i")/log)"
  done
  for ((i = 2; i <= MQC_NODES; i++)); do
    { mqcctl "$i" -q stop_app && mqcctl "$i" -q reset && mqcctl "$i" -q join_cluster "$(mqc_name 1)" \
      && mqcctl "$i" -q start_app; } >>"$(mqc_dir "$i")/log/join.out" 2>&1 \
      || { cat "$(mqc_dir "$i")/log/join.out" >&2; die "$(mqc_name "$i") could not join $(mqc_name 1)"; }
  done
  local running
  running=$(mqcctl 1 -q cluster_status --formatter json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["running_nodes"]))')
  [[ "$running" == "$MQC_NODES" ]] || die "the cluster has $running running nodes, not $MQC_NODES"
  info "cluster of $MQC_NODES nodes up (net_ticktime $MQC_NET_TICKTIME s, $MQC_PARTITION_HANDLING)"
}

# Stops every node (rabbitmqctl stop with the pid file returns once the VM exited; a stopped node is
# resumed first), SIGKILL by pid after that; removes the files.
mqc_down() {
  local i pid
  local -a pids=()
  for ((i = 1; i <= MQC_NODES; i++)); do
    pid=$(mqc_pid "$i") || continue
    kill -CONT "$pid" 2>/dev/null || true
    (mqcctl "$i" -q stop "$(mqc_dir "$i")/pid" >/dev/null 2>&1 || true) &
    pids+=("$pid")
  done
  wait
  for pid in "${pids[@]}"; do
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
    wait_for 10 gone "$pid" || true
  done
  if [[ -e "$MQC_BASE/.chaos-rig" ]]; then as_root rm -rf "$MQC_BASE"; fi
}

# ctl answers ------------------------------------------------------------------

# "killed N pid P": SIGKILL of node N's VM, as a machine failure does (its sockets reset at once).
mqc_kill() {
  local pid
  pid=$(mqc_pid "$1") || die "$(mqc_name "$1") is not running"
  kill -KILL "$pid"
  wait_for 10 gone "$pid" || die "$(mqc_name "$1") pid $pid still runs after SIGKILL"
  echo "killed $1 pid $pid"
}

# "paused N pid P" / "resumed N pid P": SIGSTOP / SIGCONT, a hung node (no reset: only timeouts notice).
mqc_signal() {
  local sig=$1 pid
  pid=$(mqc_pid "$2") || die "$(mqc_name "$2") is not running"
  kill "-$sig" "$pid"
  [[ "$sig" == STOP ]] && echo "paused $2 pid $pid" || echo "resumed $2 pid $pid"
}

# "started N in S s": starts node N and waits until it booted and rejoined the cluster.
mqc_start_wait() {
  local t0=$SECONDS
  mqc_start "$1"
  mqc_wait "$1" || die "$(mqc_name "$1") did not boot again"
  echo "started $1 in $((SECONDS - t0)) s"
}

# "restarted N in S s": a graceful restart (rabbitmqctl stop with the pid file, then start).
mqc_restart() {
  local t0=$SECONDS pid
  pid=$(mqc_pid "$1") || die "$(mqc_name "$1") is not running"
  mqcctl "$1" -q stop "$(mqc_dir "$1")/pid" >/dev/null 2>&1 || true
  if ! wait_for 30 gone "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  mqc_start "$1"
  mqc_wait "$1" || die "$(mqc_name "$1") did not boot again"
  echo "restarted $1 in $((SECONDS - t0)) s"
}

# The node index leading a quorum queue of the soak's vhost.
mqc_leader() {
  local leader i
  leader=$(mqctl -q list_queues -p "$MQ_VHOST" name leader | awk -v q="$1" '$1 == q {print $2}')
  for ((i = 1; i <= MQC_NODES; i++)); do
    [[ "$leader" == "$(mqc_name "$i")" ]] && { echo "$i"; return 0; }
  done
  die "no leader of $1 found (answer: '$leader')"
}

# "N partitions NODE..." per running node, as each sees it (a node paused past net_ticktime leaves one
# recorded after it resumes, even with pause_minority).
mqc_partitions() {
  local i pid out
  for ((i = 1; i <= MQC_NODES; i++)); do
    pid=$(mqc_pid "$i") && ! stopped "$pid" || continue
    out=$(mqcctl "$i" -q eval 'rabbit_node_monitor:partitions().' 2>/dev/null | tr -d "[]'\n" | tr ',' ' ') || continue
    echo "$i partitions $out"
  done
}

# "healed N": restarts node N's broker application (the VM stays), which clears a recorded partition.
mqc_heal() {
  mqcctl "$1" -q stop_app >/dev/null
  mqcctl "$1" -q start_app >/dev/null
  echo "healed $1"
}

# What the driver's watcher reads, one call every few seconds:
#   queue NAME consumers C members M online O leader NODE      (each quorum queue of the vhost)
#   conn SERVICE NODE CONNECTION-NAME                           (each AMQP connection of the vhost)
# A connection's service is the one whose pid its client_properties name.
mqc_watch() {
  local i
  mqctl -q list_queues -p "$MQ_VHOST" name type consumers members online leader 2>/dev/null \
    | awk '$2 == "quorum" {
        n = $0; sub(/^[^[]*/, "", n)
        m = n; sub(/\].*/, "", m); members = split(m, a, ",")
        o = n; sub(/^[^]]*\][ \t]*/, "", o); sub(/\].*/, "", o); online = (o ~ /@/) ? split(o, b, ",") : 0
        leader = $NF
        printf "queue %s consumers %s members %d online %d leader %s\n", $1, $3, members, online, leader }'
  # Each connection names its process in client_properties (process_pid, see common's BrokerConnection):
  # the owner is the service whose pid file holds that pid, "gone" when none does (a process killed whose
  # connection the broker has not dropped yet).
  local pids
  pids=$(for name in "${SERVICE_NAMES[@]}"; do
    pid=$(svc_pid "$name") && echo "$pid $name"
  done)
  # list_connections has no node column in 3.10: the node is the one whose AMQP port the client reached.
  mqctl -q list_connections vhost port client_properties 2>/dev/null \
    | awk -v vhost="$MQ_VHOST" -v pids="$pids" -v base="${MQC_AMQP_PORTS[0]}" '
        BEGIN { k = split(pids, l, "\n"); for (j = 1; j <= k; j++) { split(l[j], f, " "); owner[f[1]] = f[2] } }
        $1 == vhost {
          s = "gone"; n = "unnamed"
          if (match($0, /"process_pid","[0-9]+"/)) { p = substr($0, RSTART + 15, RLENGTH - 16); if (p in owner) s = owner[p] }
          if (match($0, /"connection_name","[^"]*"/)) { n = substr($0, RSTART + 19, RLENGTH - 20) }
          printf "conn %s chaos-c%d@localhost %s\n", s, $2 - base + 1, n }'
}

# ---------------------------------------------------------------- PostgreSQL ---

pgc_bin() { echo "/usr/lib/postgresql/$PG_VERSION/bin"; }
pgc_dir() { echo "$PGC_BASE/$1"; }
pgc_port() { [[ "$1" == a ]] && echo "$PGC_PORT_A" || echo "$PGC_PORT_B"; }
pgc_other() { [[ "$1" == a ]] && echo b || echo a; }
pgc_url() { echo "jdbc:postgresql://127.0.0.1:$PGC_PORT_A,127.0.0.1:$PGC_PORT_B/$DB_NAME?targetServerType=primary"; }

as_pg() { (cd / && as_root timeout "${PGC_TIMEOUT:-300}" runuser -u postgres -- "$@"); }

# pg_ctl of node N; port and cluster_name (the standby's application_name) on the command line, so the two
# data directories stay alike (pg_basebackup and pg_rewind copy the configuration files).
pgc_ctl() {
  local n=$1
  shift
  as_pg "$(pgc_bin)/pg_ctl" -D "$(pgc_dir "$n")" -l "$PGC_BASE/$n.log" \
    -o "-p $(pgc_port "$n") -c cluster_name=chaos_$n" "$@"
}

# pgc_sql N ARGS...: psql as postgres on node N's private socket (trust), tuples only.
pgc_sql() {
  local n=$1
  shift
  as_pg psql -X -q -h "$PGC_BASE/run" -p "$(pgc_port "$n")" -U postgres -d postgres -v ON_ERROR_STOP=1 -tA "$@"
}

# pgc_pid N: the postmaster, from postmaster.pid, if it runs node N's data directory. Known by its
# working directory (the postmaster changes to its data directory), not its command line: after
# `pg_ctl restart` the command line has no -D (run 9 of the clustered soak took a restarted primary
# for a stopped one, found "no primary" and failed its next failover).
pgc_pid() {
  local f pid
  f="$(pgc_dir "$1")/postmaster.pid"
  [[ -f "$f" ]] || return 1
  pid=$(head -n 1 "$f" 2>/dev/null)
  alive "$pid" || return 1
  [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$(pgc_bin)/postgres" ]] || return 1
  [[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" == "$(pgc_dir "$1")" ]] || return 1
  echo "$pid"
}

# primary, standby, down, or unknown (runs but does not answer: stopped).
pgc_role() {
  local r
  pgc_pid "$1" >/dev/null || { echo down; return 0; }
  # 10 s: on a loaded machine psql alone can take seconds, and a slow answer is no stopped server.
  r=$(PGC_TIMEOUT=10 pgc_sql "$1" -c 'SELECT pg_is_in_recovery()' 2>/dev/null) || { echo unknown; return 0; }
  case "$r" in f) echo primary ;; t) echo standby ;; *) echo unknown ;; esac
}

pgc_find() {
  local n
  for n in a b; do [[ "$(pgc_role "$n")" == "$1" ]] && { echo "$n"; return 0; }; done
  return 1
}

# The postmaster and every child. Each backend calls setsid(), so a process-group signal reaches the
# postmaster alone: the children are listed by parent pid while the postmaster is stopped (it cannot fork).
pgc_signal() {
  local sig=$1 n=$2 pid
  local -a kids=()
  pid=$(pgc_pid "$n") || die "PostgreSQL node $n is not running"
  if [[ "$sig" == CONT ]]; then
    mapfile -t kids < <(ps -eo pid=,ppid= | awk -v p="$pid" '$2 == p {print $1}')
    kill -CONT "${kids[@]}" "$pid" 2>/dev/null || true
  else
    kill -STOP "$pid"
    mapfile -t kids < <(ps -eo pid=,ppid= | awk -v p="$pid" '$2 == p {print $1}')
    kill "-$sig" "$pid" "${kids[@]}" 2>/dev/null || true
  fi
  echo "$pid"
}

# Synchronous replication on primary N ('*': any one standby), or none; ALTER SYSTEM writes
# postgresql.auto.conf, which a base backup or pg_rewind copies, so each role change sets it anew.
pgc_set_sync() {
  local names=''
  [[ "$PGC_SYNC" == on ]] && names='*'
  pgc_sql "$1" -c "ALTER SYSTEM SET synchronous_standby_names = '$names'" -c "SELECT pg_reload_conf()" >/dev/null
}

# pgc_streaming N: primary N has one standby streaming, in sync when PGC_SYNC=on.
pgc_streaming() {
  local want=async
  [[ "$PGC_SYNC" == on ]] && want=sync
  [[ "$(PGC_TIMEOUT=5 pgc_sql "$1" -c "SELECT count(*) FROM pg_stat_replication
        WHERE state = 'streaming' AND sync_state = '$want'" 2>/dev/null)" == 1 ]]
}

pgc_wait_streaming() { wait_for "$2" pgc_streaming "$1"; }

# A primary (a) and its streaming standby (b, pg_basebackup -R), synchronous unless PGC_SYNC=off; then the
# soak's role and database on the primary.
pgc_up() {
  local p
  PG_VERSION=$(pg_server_version)
  [[ -n "$PG_VERSION" ]] || die "no PostgreSQL server binaries under /usr/lib/postgresql"
  pgc_down
  for p in "$PGC_PORT_A" "$PGC_PORT_B"; do
    tcp_open 127.0.0.1 "$p" && die "port $p is taken by a process the soak did not start"
  done
  step "creating PostgreSQL primary a on $PGC_PORT_A and standby b on $PGC_PORT_B (files in $PGC_BASE; synchronous: $PGC_SYNC, synchronous_commit=$PGC_SYNCHRONOUS_COMMIT)"
  as_root mkdir -p "$PGC_BASE/run"
  as_root touch "$PGC_BASE/.chaos-rig"
  as_root chown -R postgres:postgres "$PGC_BASE"
  as_root chmod 700 "$PGC_BASE/run"
  as_pg "$(pgc_bin)/initdb" -D "$(pgc_dir a)" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >"$LOG_DIR/pg-initdb.log" 2>&1 || die "initdb failed (.chaos/logs/pg-initdb.log)"
  as_pg tee -a "$(pgc_dir a)/postgresql.conf" >/dev/null <<CONF

# --- chaos/run --cluster: the same on both nodes (port and cluster_name come from pg_ctl -o) ---
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PGC_BASE/run'
max_connections = 200
shared_buffers = 64MB
fsync = on
wal_level = replica
max_wal_senders = 4
wal_keep_size = 256MB
hot_standby = on
wal_log_hints = on
synchronous_commit = $PGC_SYNCHRONOUS_COMMIT
CONF
  pgc_ctl a -w -t 60 start >/dev/null || die "PostgreSQL node a did not start ($PGC_BASE/a.log)"
  as_pg "$(pgc_bin)/pg_basebackup" -h "$PGC_BASE/run" -p "$PGC_PORT_A" -U postgres -D "$(pgc_dir b)" -R -X stream -c fast \
    || die "pg_basebackup of node b failed"
  pgc_ctl b -w -t 60 start >/dev/null || die "PostgreSQL node b did not start ($PGC_BASE/b.log)"
  # Only now, so the base backup did not copy it: a promoted standby that inherited it would wait for
  # a standby on every commit.
  pgc_set_sync a
  pgc_wait_streaming a 30 || die "no standby streaming from node a"
  pgc_sql a -c "CREATE ROLE $DB_USER WITH LOGIN PASSWORD '$DB_PASSWORD'" \
    -c "CREATE DATABASE $DB_NAME OWNER $DB_USER TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'" >/dev/null
}

# Both servers stopped (a stopped one resumed first; SIGKILL by pid if pg_ctl cannot), the files removed.
pgc_down() {
  local n
  [[ -n "$PG_VERSION" ]] || PG_VERSION=$(pg_server_version)
  for n in a b; do
    pgc_pid "$n" >/dev/null || continue
    pgc_signal CONT "$n" >/dev/null || true
    PGC_TIMEOUT=40 pgc_ctl "$n" -w -t 30 -m fast stop >/dev/null 2>&1 || pgc_signal KILL "$n" >/dev/null || true
  done
  if [[ -e "$PGC_BASE/.chaos-rig" ]]; then as_root rm -rf "$PGC_BASE"; fi
}

# ctl answers ------------------------------------------------------------------

# "paused N pid P" for ROLE (primary|standby): SIGSTOP of the server and all its processes.
pgc_pause() {
  local n
  n=$(pgc_find "$1") || die "no $1 to pause"
  echo "paused $n pid $(pgc_signal STOP "$n")"
}

# "resumed N pid P": SIGCONT of node N (a or b, as pgc_pause named it).
pgc_resume() {
  [[ "$1" == a || "$1" == b ]] || die "no PostgreSQL node '$1' (a or b)"
  echo "resumed $1 pid $(pgc_signal CONT "$1")"
}

# "killed N pid P": SIGKILL of node N (a or b, as pgc_pause named it) and all its processes: a machine
# failure. By name, not by role: asking a stopped server its role waits for psql's timeout, and the
# role lookup made a planned 31 s stop of the primary last 86 s (clustered run 14).
pgc_kill() {
  [[ "$1" == a || "$1" == b ]] || die "no PostgreSQL node '$1' (a or b)"
  echo "killed $1 pid $(pgc_signal KILL "$1")"
}

# "promoted N in MS ms": the standby becomes the primary; its synchronous_standby_names (copied from the
# old primary) is reset, or every commit would wait for a standby that is gone. Synchronous again at rejoin.
pgc_promote() {
  local n t0
  n=$(pgc_find standby) || die "no standby to promote"
  t0=$(date +%s%3N)
  pgc_ctl "$n" -w -t 60 promote >/dev/null
  pgc_sql "$n" -c "ALTER SYSTEM RESET synchronous_standby_names" -c "SELECT pg_reload_conf()" >/dev/null
  echo "promoted $n in $(($(date +%s%3N) - t0)) ms"
}

# "rejoined N in S s by rewind|basebackup": the node that is down follows the primary again, and
# replication is synchronous again (PGC_SYNC). pg_rewind first; a fresh base backup when it fails.
pgc_rejoin() {
  local p n pid t0=$SECONDS how=rewind
  p=$(pgc_find primary) || die "no primary to follow"
  n=$(pgc_other "$p")
  pgc_pid "$n" >/dev/null && die "PostgreSQL node $n still runs"
  # A killed postmaster may linger as a zombie; its lock file then names a live pid.
  pid=$(head -n 1 "$(pgc_dir "$n")/postmaster.pid" 2>/dev/null || true)
  wait_for 60 gone "$pid" || true
  # pg_rewind reads the source's timeline from its control file, which the checkpoint after a promotion
  # updates: force it rather than race it.
  pgc_sql "$p" -c CHECKPOINT >/dev/null
  if ! as_pg "$(pgc_bin)/pg_rewind" -D "$(pgc_dir "$n")" -R \
      --source-server="host=$PGC_BASE/run port=$(pgc_port "$p") user=postgres dbname=postgres" \
      >"$LOG_DIR/pg-rewind-$n.log" 2>&1; then
    how=basebackup
    as_root rm -rf "$(pgc_dir "$n")"
    as_pg "$(pgc_bin)/pg_basebackup" -h "$PGC_BASE/run" -p "$(pgc_port "$p")" -U postgres -D "$(pgc_dir "$n")" \
      -R -X stream -c fast || die "neither pg_rewind nor pg_basebackup brought node $n back"
  fi
  # Copied from the primary: the standby must not wait for a standby of its own once promoted.
  as_root sed -i '/^synchronous_standby_names/d' "$(pgc_dir "$n")/postgresql.auto.conf"
  pgc_ctl "$n" -w -t 120 start >/dev/null || die "PostgreSQL node $n did not start as a standby"
  pgc_set_sync "$p"
  pgc_wait_streaming "$p" 60 || die "node $n does not stream from $p"
  echo "rejoined $n in $((SECONDS - t0)) s by $how"
}

# "a primary" / "b standby" lines.
pgc_roles() {
  local n
  for n in a b; do echo "$n $(pgc_role "$n")"; done
}

# Ends every connection of the services to the soak's database on the primary; how many.
pgc_terminate() {
  local p
  p=$(pgc_find primary) || die "no primary"
  pgc_sql "$p" -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                   WHERE datname = '$DB_NAME' AND usename = '$DB_USER' AND pid <> pg_backend_pid()"
}

pgc_restart() {
  local p
  p=$(pgc_find primary) || die "no primary"
  pgc_ctl "$p" -w -t 60 -m fast restart >/dev/null
}
