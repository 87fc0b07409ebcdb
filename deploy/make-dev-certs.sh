#!/usr/bin/env bash
# Makes local development credentials for a TLS coordinator with tokens:
#   DIR/ca.pem, ca.key          a throw-away certificate authority (10 days)
#   DIR/server.pem, server.key  the coordinator's certificate for 127.0.0.1 and
#                               localhost (plus any extra SANs given)
#   DIR/worker.pem, worker.key  a worker client certificate (mutual TLS)
#   DIR/tokens                  the coordinator's --tokens-file (one token per role)
#   DIR/{client,worker,read-only}.token   each role's token, for --token-file
# Keys and tokens are chmod 600. For development only: real deployments use
# certificates from their own CA and tokens from their secret store.
#
#   deploy/make-dev-certs.sh DIR [SAN ...]     e.g. SAN = IP:10.0.0.5 DNS:tuner.lan
#   build/server/mtune-coordinator --tls-cert DIR/server.pem --tls-key DIR/server.key \
#       --tls-client-ca DIR/ca.pem --tokens-file DIR/tokens
#   build/worker/mtune-worker --tls-ca DIR/ca.pem --tls-cert DIR/worker.pem \
#       --tls-key DIR/worker.key --token-file DIR/worker.token
#   mtune workers --tls-ca DIR/ca.pem --token-file DIR/client.token
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -ge 1 ] && exit 0 || exit 2
fi
if ! command -v openssl >/dev/null; then
  echo "make-dev-certs.sh: openssl is missing (apt-get install openssl)" >&2
  exit 1
fi
dir=$1
shift
sans="IP:127.0.0.1,IP:::1,DNS:localhost"
for san in "$@"; do
  case "$san" in
    IP:*|DNS:*) sans="$sans,$san" ;;
    *) echo "make-dev-certs.sh: a SAN is IP:ADDRESS or DNS:NAME, got '$san'" >&2; exit 2 ;;
  esac
done
mkdir -p "$dir"
umask 077
cd "$dir"
days=10

# EC P-256 keys: small, fast, and supported by every gRPC TLS stack.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -keyout ca.key -out ca.pem -subj "/CN=mtune development CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  2>/dev/null

# Signs NAME.csr with the CA, adding the extensions in $2.
sign() {
  printf '%s\n' "$2" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" \
    -out "$1.pem" -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key \
  -out server.csr -subj "/CN=mtune-coordinator" 2>/dev/null
sign server "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$sans"

openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout worker.key \
  -out worker.csr -subj "/CN=mtune-worker" 2>/dev/null
sign worker "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
subjectAltName=DNS:mtune-worker"
rm -f ca.srl

: > tokens
for role in client worker read-only; do
  token=$(openssl rand -hex 32)
  printf '%s\n' "$token" > "$role.token"
  printf '%s %s\n' "$role" "$token" >> tokens
done
# Certificates are public; keys and tokens stay private (umask 077 above).
chmod 644 ca.pem server.pem worker.pem
echo "make-dev-certs.sh: wrote CA, server (${sans}) and worker certificates and tokens to $(pwd)"
