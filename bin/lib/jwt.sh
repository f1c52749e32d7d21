# shellcheck shell=bash
# Development JWT minting with bash + openssl. Source after common.sh.
#
#   jwt_mint SUB GROUPS_CSV TTL_SECONDS   prints a compact RS256 JWT
#
# The key is $JOBCTL_JWT_PRIVATE_KEY, default dev/jwt/private.pem (local runs and tests only).

JWT_ISSUER="${JOBCTL_JWT_ISSUER:-jobapi-dev}"
# The API refuses a token for another audience (mp.jwt.verify.audiences, JOBAPI_JWT_AUDIENCE).
JWT_AUDIENCE="${JOBCTL_JWT_AUDIENCE:-jobapi}"
# The API refuses a token whose lifetime (exp - iat) is longer than this (smallrye.jwt.time-to-live).
JWT_MAX_TTL=43200
JWT_KID="jobapi-dev"
: "${JOBCTL_JWT_PRIVATE_KEY:=$ROOT/dev/jwt/private.pem}"

# base64url without padding, from stdin.
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }

# JSON string literal. Callers reject control characters beforehand.
json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

# "a,b, c" -> ["a","b","c"]; "" -> []
json_groups() {
  local csv=$1 out='' g
  local -a parts=()
  [[ -n "$csv" ]] && IFS=',' read -r -a parts <<<"$csv"
  for g in "${parts[@]}"; do
    g="${g#"${g%%[![:space:]]*}"}"   # trim leading space
    g="${g%"${g##*[![:space:]]}"}"   # trim trailing space
    [[ -z "$g" ]] && continue
    out+="${out:+,}$(json_str "$g")"
  done
  printf '[%s]' "$out"
}

jwt_mint() {
  local sub=$1 groups=$2 ttl=$3
  local key=$JOBCTL_JWT_PRIVATE_KEY
  [[ -r "$key" ]] || die "JWT signing key not readable: $key"
  have openssl || die "openssl not found"

  local now jti header claims input sig
  now=$(date +%s)
  jti=$(openssl rand -hex 16)
  header=$(printf '{"alg":"RS256","typ":"JWT","kid":%s}' "$(json_str "$JWT_KID")")
  ((ttl <= JWT_MAX_TTL)) || die "a token may live at most $JWT_MAX_TTL s (the API refuses longer ones)"
  claims=$(printf '{"iss":%s,"aud":%s,"sub":%s,"upn":%s,"groups":%s,"iat":%d,"exp":%d,"jti":%s}' \
    "$(json_str "$JWT_ISSUER")" "$(json_str "$JWT_AUDIENCE")" "$(json_str "$sub")" "$(json_str "$sub")" \
    "$(json_groups "$groups")" "$now" "$((now + ttl))" "$(json_str "$jti")")
  input="$(printf '%s' "$header" | b64url).$(printf '%s' "$claims" | b64url)"
  sig=$(printf '%s' "$input" | openssl dgst -sha256 -sign "$key" -binary | b64url)
  [[ -n "$sig" ]] || die "signing failed with $key"
  printf '%s.%s\n' "$input" "$sig"
}
