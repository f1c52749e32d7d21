# shellcheck shell=bash
# What bin/dev, bench/run and chaos/run share to run the stack on this machine: waiting, probing
# ports and health, PostgreSQL and RabbitMQ administration, and the processes of the services.
# Source it after bin/lib/common.sh; do not execute it.
#
# The servers it talks to are parameters, read when a function runs (defaults: the shared servers
# that `bin/dev services` provisions):
#   PG_HOST, PG_PORT   PostgreSQL (127.0.0.1, 5432); pg_admin logs in on the local socket of PG_PORT
#   MQ_HOST, MQ_PORT   RabbitMQ's AMQP listener, which mq_ready probes (127.0.0.1, 5672)
#   mqctl              a function: by default the shared node's rabbitmqctl, run as root; a script
#                      with a node of its own (chaos/run) defines its own mqctl after sourcing this
#
#   wait_for SECONDS CMD...        run CMD every second until it succeeds or time runs out
#   tcp_open HOST PORT             true when something accepts TCP connections there
#   http_status URL [SECONDS]      prints the HTTP status of a GET (000: no answer)
#   tail_log FILE [LINES]          the end of a log, on stderr
#   apt_install PACKAGE...         apt-get update (once per run) and install, as root
#   pg_cluster_ctl V CLUSTER ACTION [ARGS]   pg_ctlcluster, as root, without systemd
#   pg_admin ARGS...               psql as the database superuser (database postgres unless -d)
#   pg_exists SQL, pg_ready        a query answers 1; the server answers
#   pg_ensure_role USER PASSWORD   the login role exists with that password
#   pg_fresh_database DB OWNER     DB dropped (connections ended) and made again, UTF-8
#   mq_ready                       the broker finished booting and AMQP accepts connections
#   mq_ensure_user USER PASSWORD   the broker user exists with that password
#   mq_fresh_vhost VHOST USER      VHOST deleted (messages and all) and made again for USER
#   pid_gone PID                   no such process any more
#   pid_runs_jar PID JAR           PID is alive and runs JAR (a recycled pid is never taken for ours)
#   pidfile_pid PIDFILE JAR        prints the pid in PIDFILE when it runs JAR; fails otherwise
#   spawn_jvm LOG PIDFILE ENV... -- JAVA_ARGS...
#                                  java in the background, detached from the terminal, appending
#                                  to LOG; its pid in PIDFILE (and in $!); a -jar whose build made a
#                                  class-data-sharing archive runs from the jar's directory with it
#   stop_pid PID GRACE             SIGTERM, up to GRACE seconds, then SIGKILL; fails when it killed
#   dev_config SERVICE             the environment line that gives api-service or worker-service the
#                                  providers of local runs, the fake provider's three: the one file
#                                  dev/config/SERVICE.properties (a build configures none of its own)

: "${PG_HOST:=127.0.0.1}" "${PG_PORT:=5432}" "${MQ_HOST:=127.0.0.1}" "${MQ_PORT:=5672}"

# ------------------------------------------------------------------ waiting ---

wait_for() {
  local timeout=$1 deadline
  shift
  deadline=$((SECONDS + timeout))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}

# shellcheck disable=SC2016 # $1/$2 expand in the inner bash, on purpose.
tcp_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null; }

http_status() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time "${2:-2}" "$1" 2>/dev/null) || true
  echo "${code:-000}"
}

tail_log() {
  local file=$1 lines=${2:-40}
  if [[ -r "$file" ]]; then
    printf -- '---- last %s lines of %s ----\n' "$lines" "$file" >&2
    tail -n "$lines" "$file" >&2 || true
    printf -- '----\n' >&2
  else
    printf '    (no readable log at %s)\n' "$file" >&2
  fi
}

APT_UPDATED=false
apt_install() {
  have apt-get || die "cannot install $*: no apt-get here; install it yourself and re-run"
  if ! $APT_UPDATED; then
    step "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
    APT_UPDATED=true
  fi
  step "apt-get install -y $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" </dev/null
}

# --------------------------------------------------------------- PostgreSQL ---

pg_cluster_ctl() { as_root pg_ctlcluster --skip-systemctl-redirect "$@" </dev/null; }

# The postgres OS user over the local socket (root: runuser; otherwise sudo), or, without sudo,
# user postgres over TCP. The caller's PG* variables (bench/run exports the jobapi role's) must
# not leak into this login.
pg_admin() {
  local -a psql_args=(-X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres "$@")
  local -a clean=(env -u PGHOST -u PGUSER -u PGPASSWORD -u PGDATABASE)
  if [[ "$(id -u)" -eq 0 ]]; then
    (cd / && "${clean[@]}" runuser -u postgres -- psql "${psql_args[@]}")
  elif have sudo; then
    (cd / && "${clean[@]}" sudo -u postgres psql "${psql_args[@]}")
  else
    "${clean[@]}" psql -h "$PG_HOST" -U postgres "${psql_args[@]}"
  fi
}

pg_exists() { [[ "$(pg_admin -tA -c "$1")" == 1 ]]; }

pg_ready() {
  if have pg_isready; then
    pg_isready -h "$PG_HOST" -p "$PG_PORT" -q -t 2
  else
    tcp_open "$PG_HOST" "$PG_PORT"
  fi
}

# pg_create WHAT EXISTS_SQL CREATE_SQL: create unless it exists; tolerates a concurrent run
# creating it between the check and the create.
pg_create() {
  local what=$1 exists_sql=$2 create_sql=$3 out
  if ! out=$(pg_admin -c "$create_sql" 2>&1); then
    pg_exists "$exists_sql" || { printf '%s\n' "$out" >&2; die "could not create $what"; }
  fi
  info "created $what"
}

pg_ensure_role() {
  local user=$1 password=$2 role_sql
  role_sql="SELECT 1 FROM pg_roles WHERE rolname = '$user'"
  if pg_exists "$role_sql"; then
    pg_admin -c "ALTER ROLE $user WITH LOGIN PASSWORD '$password'"
    info "role $user exists (login and password reset)"
  else
    pg_create "role $user" "$role_sql" "CREATE ROLE $user WITH LOGIN PASSWORD '$password'"
  fi
}

pg_fresh_database() {
  local db=$1 owner=$2
  pg_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
  pg_admin -c "CREATE DATABASE $db OWNER $owner TEMPLATE template0 ENCODING 'UTF8'
               LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'"
}

# ----------------------------------------------------------------- RabbitMQ ---

# rabbitmqctl needs the broker's Erlang cookie, readable by root (the Debian wrapper then switches
# to the rabbitmq user).
mqctl() { as_root rabbitmqctl "$@"; }

# Up = the node finished booting (await_startup) and AMQP accepts connections. await_startup fails
# at once while the node is not reachable at all.
mq_ready() {
  mqctl -q await_startup --timeout 10 >/dev/null 2>&1 && tcp_open "$MQ_HOST" "$MQ_PORT"
}

mq_ensure_user() {
  local user=$1 password=$2 users
  # Read whole before matching: grep -q may stop reading early, and with pipefail the writer's
  # SIGPIPE would read as "no such user".
  users=$(mqctl -s list_users)
  if awk '{print $1}' <<<"$users" | grep -qxF "$user"; then
    mqctl -q change_password "$user" "$password" >/dev/null
    info "user $user exists (password reset)"
  else
    mqctl -q add_user "$user" "$password" >/dev/null
    info "created user $user"
  fi
}

mq_fresh_vhost() {
  local vhost=$1 user=$2
  mqctl -q delete_vhost "$vhost" >/dev/null 2>&1 || true
  mqctl -q add_vhost "$vhost" >/dev/null
  mqctl -q set_permissions -p "$vhost" "$user" ".*" ".*" ".*" >/dev/null
}

# ------------------------------------------------------------- PostgreSQL ---

# The newest PostgreSQL server installed (a version under /usr/lib/postgresql with bin/postgres),
# or nothing: what a private cluster (the soaks', the benchmark's) is created with.
pg_server_version() {
  local d
  for d in /usr/lib/postgresql/*/bin/postgres; do
    [[ -x "$d" ]] && basename "$(dirname "$(dirname "$d")")"
  done | sort -V | tail -n 1
}

# ---------------------------------------------------------------- processes ---

# A zombie (ended, not yet reaped by the shell that started it) is gone too.
pid_gone() { ! kill -0 "$1" 2>/dev/null || [[ "$(ps -o stat= -p "$1" 2>/dev/null)" == Z* ]]; }

pid_runs_jar() {
  local pid=$1 jar=$2 args
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r "/proc/$pid/cmdline" ]]; then
    args=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  else
    args=$(ps -p "$pid" -o args= 2>/dev/null) || return 1
  fi
  [[ "$args" == *"$jar"* ]] && return 0
  # Started from the jar's own directory (spawn_jvm, class-data sharing): named relatively there.
  [[ "$args" == *"-jar $(basename "$jar")"* && "$(readlink "/proc/$pid/cwd" 2>/dev/null)" == "$(dirname "$jar")" ]]
}

pidfile_pid() {
  local pidfile=$1 jar=$2 pid
  [[ -f "$pidfile" ]] || return 1
  pid=$(<"$pidfile")
  pid_runs_jar "$pid" "$jar" || return 1
  echo "$pid"
}

spawn_jvm() {
  local log=$1 pidfile=$2 dir=.
  shift 2
  local -a envs=() args=()
  while [[ "$1" != -- ]]; do envs+=("$1"); shift; done
  shift
  # A Quarkus jar with the class-data-sharing archive its build made (quarkus.package.jar.appcds) runs
  # from its own directory: the JVM takes the archive only for the class path it was made with,
  # quarkus-run.jar named relatively.
  while [[ $# -gt 0 ]]; do
    if [[ "$1" == -jar && -f "$(dirname "$2")/app-cds.jsa" ]]; then
      dir=$(dirname "$2")
      args+=(-XX:SharedArchiveFile=app-cds.jsa -jar "$(basename "$2")")
      shift 2
    else
      args+=("$1")
      shift
    fi
  done
  (cd "$dir" && exec env "${envs[@]}" nohup java "${args[@]}") >>"$log" 2>&1 </dev/null &
  local pid=$! deadline=$((SECONDS + 120))
  # Return once the child runs java, or has ended: until then it is a copy of this shell, which
  # pid_runs_jar cannot tell from a dead service, and a supervisor asking at once starts a second
  # one. A fixed number of polls was not enough: the soak at load 40 outwaited 10 s, started a
  # second api-1 beside the first, and the loser of the port left the pid file naming a dead one.
  until pid_gone "$pid" || [[ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" == java\ * ]]; do
    if ((SECONDS >= deadline)); then
      echo "spawn_jvm: pid $pid did not start java within 120 s" >&2
      break
    fi
    sleep 0.05
  done
  echo "$pid" >"$pidfile"
}

# Quarkus reads the file named here over the application.properties in the jar (quarkus:dev reads
# the same file through its %dev profile).
dev_config() {
  local file="$ROOT/dev/config/$1.properties"
  [[ -f "$file" ]] || die "no local provider configuration for $1: $file missing"
  echo "QUARKUS_CONFIG_LOCATIONS=$file"
}

# Polls every 0.2 s, so a stop that a benchmark waits for costs no more than the process takes.
stop_pid() {
  local pid=$1 grace=$2 i
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 5; i++)); do
    pid_gone "$pid" && return 0
    sleep 0.2
  done
  pid_gone "$pid" && return 0
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    pid_gone "$pid" && break
    sleep 0.2
  done
  return 1
}
