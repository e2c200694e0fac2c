/* test_replay_body.c — generated bodies, replay_serve's answers and replay_write_site's
 * layout (src/replay/replay_body.c, replay_site.c). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_err.h"
#include "replay.h"

static const char *const plan_text =
    "{\"format\":\"speedy-lab-plan/1\",\"seed\":42,"
    "\"hosts\":[{\"name\":\"www.example.test\",\"port\":80},{\"name\":\"cdn.example.test\","
    "\"port\":8080}],\"resources\":["
    "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/\",\"status\":200,"
    "\"response_headers\":[[\"content-type\",\"text/html\"],[\"x-a\",\"1\"]],\"body_size\":70000},"
    "{\"id\":1,\"host\":0,\"method\":\"GET\",\"path\":\"/old\",\"status\":302,"
    "\"response_headers\":[[\"location\",\"/recorded\"]],\"body_size\":0,\"redirect_to\":2},"
    "{\"id\":2,\"host\":1,\"method\":\"GET\",\"path\":\"/img/a.png?v=1\",\"status\":200,"
    "\"response_headers\":[],\"body_size\":333},"
    "{\"id\":3,\"host\":0,\"method\":\"GET\",\"path\":\"/css/s.css\",\"status\":404,"
    "\"response_headers\":[],\"body_size\":17},"
    "{\"id\":4,\"host\":0,\"method\":\"GET\",\"path\":\"/css\",\"status\":200,"
    "\"response_headers\":[],\"body_size\":5},"
    "{\"id\":5,\"host\":0,\"method\":\"GET\",\"path\":\"/a%20b\",\"status\":204,"
    "\"response_headers\":[],\"body_size\":0},"
    "{\"id\":6,\"host\":0,\"method\":\"GET\",\"path\":\"/index.html\",\"status\":200,"
    "\"response_headers\":[],\"body_size\":3},"
    "{\"id\":7,\"host\":0,\"method\":\"GET\",\"path\":\"/js/app.js\",\"status\":200,"
    "\"response_headers\":[],\"body_size\":1000}"
    "]}";

static replay_plan *load(void) {
  char err[512] = "";
  replay_plan *plan = NULL;
  cr_assert_eq(replay_plan_parse(&plan, plan_text, strlen(plan_text), "t", err, sizeof(err)), 0,
               "%s", err);
  return plan;
}

/* Reads the whole body in reads of `chunk` bytes; returns the byte count, the bytes in *out. */
static size_t drain(http_body *body, size_t chunk, uint8_t **out) {
  size_t cap = 1 << 20, len = 0;
  uint8_t *buf = malloc(cap);
  cr_assert_not_null(buf);
  int eof = 0;
  while (!eof) {
    cr_assert_leq(len + chunk, cap, "body longer than the test expects");
    int64_t n = http_body_read(body, buf + len, chunk, &eof);
    cr_assert_geq(n, 0, "read failed: %lld", (long long)n);
    len += (size_t)n;
  }
  *out = buf;
  return len;
}

static void request_init(http_request *request, const char *method, const char *authority,
                         const char *path) {
  http_request_init(request, HTTP_PROTO_HTTP11, 0, 0);
  cr_assert_eq(http_request_set_method(request, method, strlen(method)), 0);
  cr_assert_eq(http_request_set_path(request, path, strlen(path)), 0);
  if (authority != NULL)
    cr_assert_eq(http_request_set_authority(request, authority, strlen(authority)), 0);
}

Test(replay_body, same_bytes_whatever_the_chunk_offsets) {
  uint8_t whole[1000], parts[1000];
  replay_body_fill(7, 3, 0, whole, sizeof(whole));
  size_t cuts[] = {0, 1, 8, 9, 15, 500, 501, 1000};
  for (size_t i = 0; i + 1 < sizeof(cuts) / sizeof(cuts[0]); i++)
    replay_body_fill(7, 3, cuts[i], parts + cuts[i], cuts[i + 1] - cuts[i]);
  cr_assert_arr_eq(whole, parts, sizeof(whole));
}

Test(replay_body, known_first_bytes_pin_the_generator) {
  /* docs/lab-replay.md defines the generator; these bytes pin it (seed 1, id 0). */
  uint8_t b[8];
  replay_body_fill(1, 0, 0, b, sizeof(b));
  uint64_t gamma = 0x9E3779B97F4A7C15ull;
  uint64_t z = 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31; /* mix(seed) */
  z ^= 0;       /* ^ id */
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31; /* key */
  uint64_t w = z + 0 * gamma;
  w = (w ^ (w >> 30)) * 0xBF58476D1CE4E5B9ull;
  w = (w ^ (w >> 27)) * 0x94D049BB133111EBull;
  w ^= w >> 31;
  for (int i = 0; i < 8; i++) cr_assert_eq(b[i], (uint8_t)(w >> (8 * i)), "byte %d", i);
}

Test(replay_body, seeds_and_ids_give_different_bytes) {
  uint8_t a[64], b[64], c[64];
  replay_body_fill(1, 0, 0, a, sizeof(a));
  replay_body_fill(2, 0, 0, b, sizeof(b));
  replay_body_fill(1, 1, 0, c, sizeof(c));
  cr_assert(memcmp(a, b, sizeof(a)) != 0);
  cr_assert(memcmp(a, c, sizeof(a)) != 0);
}

Test(replay_body, body_delivers_exactly_body_size_bytes_then_eof) {
  replay_plan *plan = load();
  const replay_resource *r = replay_plan_resource(plan, 0);
  size_t chunks[] = {1, 7, 4096, 16384, 100000};
  uint8_t *expected = malloc(r->body_size);
  replay_body_fill(42, 0, 0, expected, r->body_size);
  for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
    http_body *body;
    cr_assert_eq(replay_body_new(&body, plan, r), 0);
    cr_assert_eq(http_body_length(body), 70000);
    uint8_t *got;
    size_t len = drain(body, chunks[i], &got);
    cr_assert_eq(len, 70000, "chunk %zu: %zu bytes", chunks[i], len);
    cr_assert_arr_eq(got, expected, len, "chunk %zu: bytes differ", chunks[i]);
    free(got);
    http_body_del(body);
  }
  free(expected);
  replay_plan_del(plan);
}

Test(replay_serve, answers_status_headers_length_and_body) {
  replay_plan *plan = load();
  http_request request;
  http_response response;
  request_init(&request, "GET", "www.example.test:41000", "/");
  http_response_init(&response);
  cr_assert_eq(replay_serve(plan, -1, &request, &response), 0);
  cr_assert_eq(response.status, 200);
  cr_assert_str_eq(http_headers_get(&response.headers, "content-type"), "text/html");
  cr_assert_str_eq(http_headers_get(&response.headers, "x-a"), "1");
  cr_assert_str_eq(http_headers_get(&response.headers, "content-length"), "70000");
  cr_assert_not_null(response.body);
  cr_assert_eq(http_body_length(response.body), 70000);
  http_response_free(&response);
  http_request_free(&request);
  replay_plan_del(plan);
}

Test(replay_serve, redirect_gets_location_of_its_target) {
  replay_plan *plan = load();
  http_request request;
  http_response response;
  request_init(&request, "GET", "www.example.test", "/old");
  http_response_init(&response);
  cr_assert_eq(replay_serve(plan, -1, &request, &response), 0);
  cr_assert_eq(response.status, 302);
  cr_assert_str_eq(http_headers_get(&response.headers, "location"),
                   "http://cdn.example.test:8080/img/a.png?v=1");
  cr_assert_str_eq(http_headers_get(&response.headers, "content-length"), "0");
  cr_assert_null(response.body);
  http_response_free(&response);
  cr_assert_eq(http_request_set_scheme(&request, "https", 5), 0);
  http_response_init(&response);
  cr_assert_eq(replay_serve(plan, -1, &request, &response), 0);
  cr_assert_str_eq(http_headers_get(&response.headers, "location"),
                   "https://cdn.example.test:8080/img/a.png?v=1");
  http_response_free(&response);
  http_request_free(&request);
  replay_plan_del(plan);
}

Test(replay_serve, unknown_path_and_unknown_host_are_404) {
  replay_plan *plan = load();
  const char *cases[][2] = {
      {"www.example.test", "/nope"}, {"other.test", "/"}, {"www.example.test", "/?x"}};
  for (size_t i = 0; i < 3; i++) {
    http_request request;
    http_response response;
    request_init(&request, "GET", cases[i][0], cases[i][1]);
    http_response_init(&response);
    cr_assert_eq(replay_serve(plan, -1, &request, &response), 0);
    cr_assert_eq(response.status, 404, "%s%s", cases[i][0], cases[i][1]);
    http_response_free(&response);
    http_request_free(&request);
  }
  replay_plan_del(plan);
}

Test(replay_serve, host_index_overrides_the_authority) {
  replay_plan *plan = load();
  http_request request;
  http_response response;
  request_init(&request, "GET", "www.example.test", "/img/a.png?v=1");
  http_response_init(&response);
  cr_assert_eq(replay_serve(plan, 1, &request, &response), 0);
  cr_assert_eq(response.status, 200);
  cr_assert_str_eq(http_headers_get(&response.headers, "content-length"), "333");
  http_response_free(&response);
  http_request_free(&request);
  replay_plan_del(plan);
}

Test(replay_serve, head_and_204_have_length_but_no_body) {
  replay_plan *plan = load();
  http_request request;
  http_response response;
  request_init(&request, "HEAD", "www.example.test", "/");
  http_response_init(&response);
  cr_assert_eq(replay_serve(plan, -1, &request, &response), 0);
  cr_assert_eq(response.status, 200);
  cr_assert_str_eq(http_headers_get(&response.headers, "content-length"), "70000");
  cr_assert_null(response.body);
  http_response_free(&response);
  http_request_free(&request);
  request_init(&request, "GET", "www.example.test", "/a%20b");
  http_response_init(&response);
  cr_assert_eq(replay_serve(plan, -1, &request, &response), 0);
  cr_assert_eq(response.status, 204);
  cr_assert_null(response.body);
  http_response_free(&response);
  http_request_free(&request);
  replay_plan_del(plan);
}

Test(replay_serve, recorded_error_status_is_replayed_with_its_body) {
  replay_plan *plan = load();
  http_request request;
  http_response response;
  request_init(&request, "GET", "www.example.test", "/css/s.css");
  http_response_init(&response);
  cr_assert_eq(replay_serve(plan, -1, &request, &response), 0);
  cr_assert_eq(response.status, 404);
  cr_assert_eq(http_body_length(response.body), 17);
  http_response_free(&response);
  http_request_free(&request);
  replay_plan_del(plan);
}

/* ---- replay_write_site ---- */

static char site_dir[256];

static void make_site(void) {
  snprintf(site_dir, sizeof(site_dir), "/tmp/replay-site-test-%d", (int)getpid());
  replay_plan *plan = load();
  char err[512] = "";
  cr_assert_eq(replay_write_site(plan, site_dir, err, sizeof(err)), 0, "%s", err);
  replay_plan_del(plan);
}

static void remove_site(void) {
  char command[300];
  snprintf(command, sizeof(command), "rm -rf '%s'", site_dir);
  cr_assert_eq(system(command), 0);
}

/* The file's bytes equal resource id's generated body. */
static void assert_file_is_body(const char *relative, uint64_t id, size_t size) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", site_dir, relative);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "missing %s", relative);
  uint8_t *got = malloc(size + 1), *expected = malloc(size + 1);
  size_t n = fread(got, 1, size + 1, f);
  fclose(f);
  cr_assert_eq(n, size, "%s: %zu bytes, expected %zu", relative, n, size);
  replay_body_fill(42, id, 0, expected, size);
  cr_assert_arr_eq(got, expected, size, "%s: bytes differ", relative);
  free(got);
  free(expected);
}

static char *read_map(void) {
  char path[512];
  snprintf(path, sizeof(path), "%s/replay-site.map", site_dir);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  static char text[8192];
  size_t n = fread(text, 1, sizeof(text) - 1, f);
  text[n] = '\0';
  fclose(f);
  return text;
}

Test(replay_site, plain_paths_are_files_under_their_host, .init = make_site, .fini = remove_site) {
  assert_file_is_body("www.example.test/js/app.js", 7, 1000);
  assert_file_is_body("www.example.test/css/s.css", 3, 17);
}

Test(replay_site, query_strings_and_escapes_are_mapped, .init = make_site, .fini = remove_site) {
  assert_file_is_body("cdn.example.test/_replay/2", 2, 333);
  const char *map = read_map();
  cr_assert(strstr(map, "\"cdn.example.test/img/a.png?v=1\" \"/cdn.example.test/_replay/2\";\n"),
            "map:\n%s", map);
  cr_assert(strstr(map, "\"www.example.test/a%20b\" \"/www.example.test/_replay/5\";\n"),
            "map:\n%s", map);
}

Test(replay_site, file_that_is_also_a_directory_is_mapped, .init = make_site, .fini = remove_site) {
  /* "/css" and "/css/s.css": the first cannot be a file. */
  assert_file_is_body("www.example.test/_replay/4", 4, 5);
  cr_assert(strstr(read_map(), "\"www.example.test/css\" \"/www.example.test/_replay/4\";"));
}

Test(replay_site, slash_and_index_html_do_not_collide, .init = make_site, .fini = remove_site) {
  /* "/" would be index.html, which "/index.html" also is: both go to the map. */
  assert_file_is_body("www.example.test/_replay/0", 0, 70000);
  assert_file_is_body("www.example.test/_replay/6", 6, 3);
  const char *map = read_map();
  cr_assert(strstr(map, "\"www.example.test/\" \"/www.example.test/_replay/0\";"), "%s", map);
}

Test(replay_site, rewriting_a_site_replaces_its_files, .init = make_site, .fini = remove_site) {
  make_site();
  assert_file_is_body("www.example.test/js/app.js", 7, 1000);
}

Test(replay_site, hosts_sharing_a_name_are_refused) {
  const char *text = "{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[{\"name\":\"a.test\","
                     "\"port\":80},{\"name\":\"a.test\",\"port\":81}],\"resources\":[]}";
  char err[512] = "";
  replay_plan *plan;
  cr_assert_eq(replay_plan_parse(&plan, text, strlen(text), "t", err, sizeof(err)), 0);
  cr_assert_eq(replay_write_site(plan, "/tmp/replay-site-never", err, sizeof(err)), -1);
  cr_assert(strstr(err, "share the name a.test") != NULL, "%s", err);
  replay_plan_del(plan);
}
