#!/bin/sh
# gencerts.sh DIR — makes throwaway test certificates in DIR: a CA (ca.pem), a server
# certificate for "localhost" and 127.0.0.1 signed by it (server.pem, server.key), one for
# the partial wildcard "w*.example.test" (wild.pem, wild.key) that no client of ours takes,
# and an unrelated CA (other-ca.pem) that must not verify the server. Keys are generated
# at test time and never committed.
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
[ -f server.pem ] && [ -f other-ca.pem ] && [ -f wild.pem ] && exit 0
q() { "$@" >/dev/null 2>&1; }
q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj "/CN=speedy test CA" -keyout ca.key -out ca.pem \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj "/CN=speedy other CA" -keyout other-ca.key -out other-ca.pem \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
  -keyout server.key -out server.csr
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext.cnf
q openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile ext.cnf -out server.pem
q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=w*.example.test" \
  -keyout wild.key -out wild.csr
printf 'subjectAltName=DNS:w*.example.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext.cnf
q openssl x509 -req -in wild.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile ext.cnf -out wild.pem
rm -f server.csr wild.csr ext.cnf ca.srl
