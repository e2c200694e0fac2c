#!/bin/sh
# gen-chain.sh — certificates for the lab's TLS replay: a root CA, an intermediate CA and
# a leaf for every replayed host, shaped like a public web PKI chain of the SPDY era
# (RSA 2048, SHA-256, policies, CRL and OCSP pointers), so that the chain the server sends
# (leaf + intermediate) is over 3 KB on the wire, as the issue's TLS model asks.
#
#   gen-chain.sh OUTDIR HOST...
#
# Writes OUTDIR/chain.pem (leaf then intermediate: speedyd --cert), OUTDIR/key.pem (the
# leaf's key: speedyd --key), OUTDIR/root.pem (the CA the client trusts: speedy get
# --cacert) and the CA keys. HOSTs become the leaf's subjectAltName (DNS names, or IP
# addresses for literals). Prints the chain's DER size. Needs openssl(1).
set -eu
if [ $# -lt 2 ]; then
  echo "usage: gen-chain.sh OUTDIR HOST..." >&2
  exit 2
fi
out=$1
shift
mkdir -p "$out"
cd "$out"

# Every form a client may check: names in lower case, with and without a trailing dot
# (OpenSSL compares it exactly); IPv4 and IPv6 literals, bracketed or not, as IP entries;
# a ":port" after a name or a bracketed literal is no part of it.
san=""
for host in "$@"; do
  host=$(printf '%s' "$host" | tr 'A-Z' 'a-z')
  case $host in
    \[*\]:*) host=${host%:*} ;;
    *:*:*) ;;
    *:*) host=${host%:*} ;;
  esac
  case $host in
    \[*\]) entry="IP:$(printf '%s' "$host" | tr -d '[]')" ;;
    *:*) entry="IP:$host" ;;
    *[!0-9.]*)
      entry="DNS:${host%.}"
      [ "${host%.}" = "$host" ] || entry="$entry,DNS:$host"
      ;;
    *) entry="IP:$host" ;;
  esac
  san="${san:+$san,}$entry"
done

# URLs are labels under .test (RFC 2606): nothing resolves or fetches them.
cat >ext.cnf <<CNF
[intermediate]
basicConstraints = critical,CA:true,pathlen:0
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
certificatePolicies = 2.5.29.32.0,@policy
crlDistributionPoints = URI:http://crl.replay-root.test/root-ca-g2.crl
authorityInfoAccess = OCSP;URI:http://ocsp.replay-root.test,caIssuers;URI:http://certs.replay-root.test/root-ca-g2.crt
extendedKeyUsage = serverAuth,clientAuth
[leaf]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = $san
certificatePolicies = 2.23.140.1.2.2,@policy
crlDistributionPoints = URI:http://crl.replay-ca.test/replay-server-ca-g3.crl
authorityInfoAccess = OCSP;URI:http://ocsp.replay-ca.test,caIssuers;URI:http://certs.replay-ca.test/replay-server-ca-g3.crt
[policy]
policyIdentifier = 1.3.6.1.4.1.55555.1.2.1
CPS.1 = "https://www.replay-ca.test/repository/cps"
userNotice.1 = @notice
[notice]
explicitText = "Issued for the speedy page-load lab replay only. This certificate models a public web PKI chain of 2012 in size and shape; relying parties beware."
CNF

subj="/C=US/ST=California/L=Mountain View/O=Speedy Lab Replay Trust Services"
openssl req -x509 -newkey rsa:2048 -sha256 -nodes -days 3650 -keyout root.key -out root.pem \
  -subj "$subj/OU=Root Certification Authority/CN=Speedy Lab Replay Root CA G2" \
  -addext "basicConstraints=critical,CA:true" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  2>/dev/null
openssl req -new -newkey rsa:2048 -sha256 -nodes -keyout intermediate.key -out intermediate.csr \
  -subj "$subj/OU=Server Certification Authority/CN=Speedy Lab Replay Server CA G3" 2>/dev/null
openssl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -CAcreateserial -days 1825 \
  -sha256 -extfile ext.cnf -extensions intermediate -out intermediate.pem 2>/dev/null
openssl req -new -newkey rsa:2048 -sha256 -nodes -keyout key.pem -out leaf.csr \
  -subj "$subj/OU=Replayed Origins/CN=$1" 2>/dev/null
openssl x509 -req -in leaf.csr -CA intermediate.pem -CAkey intermediate.key -CAcreateserial \
  -days 825 -sha256 -extfile ext.cnf -extensions leaf -out leaf.pem 2>/dev/null
cat leaf.pem intermediate.pem >chain.pem
chmod 600 key.pem root.key intermediate.key
rm -f leaf.csr intermediate.csr ext.cnf ./*.srl
leaf_der=$(openssl x509 -in leaf.pem -outform DER | wc -c)
intermediate_der=$(openssl x509 -in intermediate.pem -outform DER | wc -c)
echo "chain: leaf $leaf_der + intermediate $intermediate_der = $((leaf_der + intermediate_der)) bytes DER"
