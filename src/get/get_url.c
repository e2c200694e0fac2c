/* get_url.c — URLs for `speedy get`: http and https URLs split into origin and path,
 * --resolve HOST:PORT:ADDR (as in curl: the URL's host is still what is sent and
 * verified), and address lookup.
 */
#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "get_int.h"

static int fail(char *err, size_t err_len, const char *msg) {
  snprintf(err, err_len, "%s", msg);
  return -1;
}

int get_url_parse(const char *url, char *scheme, size_t scheme_len, char *host, size_t host_len,
                  int *port, char *authority, size_t authority_len, char **path_out, char *err,
                  size_t err_len) {
  const char *p;
  if (strncmp(url, "https://", 8) == 0) {
    snprintf(scheme, scheme_len, "https");
    *port = 443;
    p = url + 8;
  } else if (strncmp(url, "http://", 7) == 0) {
    snprintf(scheme, scheme_len, "http");
    *port = 80;
    p = url + 7;
  } else {
    return fail(err, err_len, "only http:// and https:// URLs are supported");
  }
  size_t auth_len = strcspn(p, "/?#");
  if (auth_len == 0) return fail(err, err_len, "no host in URL");
  if (auth_len >= authority_len) return fail(err, err_len, "host too long");
  if (memchr(p, '@', auth_len)) return fail(err, err_len, "user names in URLs are not supported");
  memcpy(authority, p, auth_len);
  authority[auth_len] = '\0';
  for (size_t i = 0; i < auth_len; i++)
    if ((unsigned char)authority[i] <= 0x20 || (unsigned char)authority[i] >= 0x7f)
      return fail(err, err_len, "bad character in host");

  const char *port_str = NULL;
  if (authority[0] == '[') {
    char *close = strchr(authority, ']');
    if (!close) return fail(err, err_len, "unterminated [IPv6] host");
    size_t n = (size_t)(close - authority - 1);
    if (n == 0 || n >= host_len) return fail(err, err_len, "bad [IPv6] host");
    memcpy(host, authority + 1, n);
    host[n] = '\0';
    if (close[1] == ':')
      port_str = close + 2;
    else if (close[1] != '\0')
      return fail(err, err_len, "junk after [IPv6] host");
  } else {
    char *colon = strchr(authority, ':');
    size_t n = colon ? (size_t)(colon - authority) : auth_len;
    if (n == 0 || n >= host_len) return fail(err, err_len, "bad host");
    memcpy(host, authority, n);
    host[n] = '\0';
    if (colon) port_str = colon + 1;
  }
  for (char *h = host; *h; h++) *h = (char)tolower((unsigned char)*h);
  if (port_str) {
    char *end;
    long v = strtol(port_str, &end, 10);
    if (*port_str == '\0' || *end != '\0' || v < 1 || v > 65535)
      return fail(err, err_len, "bad port");
    *port = (int)v;
  }

  const char *rest = p + auth_len;
  size_t rest_len = strcspn(rest, "#"); /* fragments never go on the wire */
  char *path = malloc(rest_len + 2);
  if (!path) return fail(err, err_len, "out of memory");
  if (rest_len == 0 || rest[0] != '/') {
    path[0] = '/';
    memcpy(path + 1, rest, rest_len);
    path[rest_len + 1] = '\0';
  } else {
    memcpy(path, rest, rest_len);
    path[rest_len] = '\0';
  }
  for (char *c = path; *c; c++)
    if ((unsigned char)*c <= 0x20 || (unsigned char)*c == 0x7f) {
      free(path);
      return fail(err, err_len, "spaces and control characters must be percent-encoded");
    }
  *path_out = path;
  return 0;
}

int get_resolve_parse(const char *arg, get_resolve *out) {
  /* HOST:PORT:ADDR; ADDR may be an IPv6 literal, in brackets or not. */
  const char *c1 = strchr(arg, ':');
  if (!c1 || c1 == arg || (size_t)(c1 - arg) >= sizeof(out->host)) return -1;
  const char *c2 = strchr(c1 + 1, ':');
  if (!c2) return -1;
  memcpy(out->host, arg, (size_t)(c1 - arg));
  out->host[c1 - arg] = '\0';
  for (char *h = out->host; *h; h++) *h = (char)tolower((unsigned char)*h);
  char *end;
  long port = strtol(c1 + 1, &end, 10);
  if (end != c2 || port < 1 || port > 65535) return -1;
  out->port = (int)port;
  const char *addr = c2 + 1;
  size_t n = strlen(addr);
  if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
    addr++;
    n -= 2;
  }
  if (n == 0 || n >= sizeof(out->addr)) return -1;
  memcpy(out->addr, addr, n);
  out->addr[n] = '\0';
  struct sockaddr_storage ss;
  if (uv_ip4_addr(out->addr, 1, (struct sockaddr_in *)&ss) != 0 &&
      uv_ip6_addr(out->addr, 1, (struct sockaddr_in6 *)&ss) != 0)
    return -1;
  return 0;
}

int get_url_resolve(const get_options *opt, const char *host, int port,
                    struct sockaddr_storage *out, char *err, size_t err_len) {
  memset(out, 0, sizeof(*out));
  const char *name = host;
  for (int i = 0; i < opt->n_resolve; i++)
    if (opt->resolve[i].port == port && strcmp(opt->resolve[i].host, host) == 0)
      name = opt->resolve[i].addr;
  if (uv_ip4_addr(name, port, (struct sockaddr_in *)out) == 0) return 0;
  if (uv_ip6_addr(name, port, (struct sockaddr_in6 *)out) == 0) return 0;
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC};
  struct addrinfo *res = NULL;
  int rv = getaddrinfo(name, NULL, &hints, &res);
  if (rv != 0 || !res) {
    snprintf(err, err_len, "cannot resolve %s: %s", host, gai_strerror(rv));
    return -1;
  }
  memcpy(out, res->ai_addr, res->ai_addrlen);
  if (out->ss_family == AF_INET6)
    ((struct sockaddr_in6 *)out)->sin6_port = htons((uint16_t)port);
  else
    ((struct sockaddr_in *)out)->sin_port = htons((uint16_t)port);
  freeaddrinfo(res);
  return 0;
}
