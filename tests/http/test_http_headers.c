/* test_http_headers.c — the header field list (src/http/http_headers.c): bounds, names,
 * removal, joining, and that strings carved from its chunks stay put and intact. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "http_err.h"
#include "http_headers.h"

Test(http_headers, names_are_lower_cased_and_values_kept_as_given) {
  http_headers h;
  http_headers_init(&h, 0, 0);
  cr_assert_eq(http_headers_add_str(&h, "Content-Type", "Text/HTML"), 0);
  cr_assert_str_eq(h.items[0].name, "content-type");
  cr_assert_str_eq(http_headers_get(&h, "CONTENT-TYPE"), "Text/HTML");
  http_headers_free(&h);
}

Test(http_headers, strings_stay_valid_while_many_more_are_added) {
  http_headers h;
  http_headers_init(&h, 0, 0);
  cr_assert_eq(http_headers_add_str(&h, "first", "value-one"), 0);
  const char *name = h.items[0].name, *value = h.items[0].value;
  char n[32], v[64];
  for (int i = 0; i < 2000; i++) {
    snprintf(n, sizeof n, "x-field-%d", i);
    snprintf(v, sizeof v, "value %d with some length to fill chunks", i);
    cr_assert_eq(http_headers_add_str(&h, n, v), 0);
  }
  cr_assert_eq(h.items[0].name, name, "the first name moved");
  cr_assert_str_eq(name, "first");
  cr_assert_str_eq(value, "value-one");
  cr_assert_str_eq(http_headers_get(&h, "x-field-1999"),
                   "value 1999 with some length to fill chunks");
  cr_assert_str_eq(http_headers_get(&h, "x-field-0"), "value 0 with some length to fill chunks");
  http_headers_free(&h);
}

Test(http_headers, a_value_larger_than_any_chunk_is_stored_whole) {
  http_headers h;
  http_headers_init(&h, 0, 0);
  static char big[100000];
  memset(big, 'b', sizeof big - 1);
  cr_assert_eq(http_headers_add_str(&h, "small", "s"), 0);
  cr_assert_eq(http_headers_add_str(&h, "big", big), 0);
  cr_assert_eq(http_headers_add_str(&h, "after", "a"), 0);
  cr_assert_eq(strlen(http_headers_get(&h, "big")), sizeof big - 1);
  cr_assert_str_eq(http_headers_get(&h, "small"), "s");
  cr_assert_str_eq(http_headers_get(&h, "after"), "a");
  http_headers_free(&h);
}

Test(http_headers, joining_many_values_keeps_every_part_in_order) {
  http_headers h;
  http_headers_init(&h, 0, 0);
  cr_assert_eq(http_headers_add_str(&h, "cookie", "c0=0"), 0);
  cr_assert_eq(http_headers_add_str(&h, "other", "o"), 0);
  char expected[8192] = "c0=0", part[32];
  for (int i = 1; i < 300; i++) {
    snprintf(part, sizeof part, "c%d=%d", i, i);
    cr_assert_eq(http_headers_append_value(&h, 0, "; ", part, strlen(part)), 0);
    /* Something else carved in between: the next append cannot extend in place. */
    if (i % 7 == 0) cr_assert_eq(http_headers_add_str(&h, "x", "y"), 0);
    strcat(expected, "; ");
    strcat(expected, part);
  }
  cr_assert_str_eq(http_headers_get(&h, "cookie"), expected);
  cr_assert_eq(h.items[0].value_len, strlen(expected));
  cr_assert_str_eq(http_headers_get(&h, "other"), "o");
  http_headers_free(&h);
}

Test(http_headers, set_replaces_every_entry_and_bytes_are_accounted) {
  http_headers h;
  http_headers_init(&h, 64, 0);
  cr_assert_eq(http_headers_add_str(&h, "via", "a"), 0);
  cr_assert_eq(http_headers_add_str(&h, "via", "b"), 0);
  cr_assert_eq(http_headers_set(&h, "via", "c"), 0);
  cr_assert_eq(h.count, 1);
  cr_assert_eq(h.bytes, 4);
  /* The bound counts live fields, not the bytes removed fields leave in the chunks. */
  for (int i = 0; i < 100; i++) cr_assert_eq(http_headers_set(&h, "via", "0123456789"), 0);
  cr_assert_eq(h.bytes, 13);
  char long_value[64];
  memset(long_value, 'v', sizeof long_value - 1);
  long_value[sizeof long_value - 1] = '\0';
  cr_assert_eq(http_headers_add_str(&h, "x", long_value), HTTP_ERR_HEADERS_TOO_LARGE);
  http_headers_free(&h);
}

Test(http_headers, free_leaves_a_usable_empty_list) {
  http_headers h;
  http_headers_init(&h, 0, 4);
  cr_assert_eq(http_headers_add_str(&h, "a", "1"), 0);
  http_headers_free(&h);
  cr_assert_eq(h.count, 0);
  cr_assert_null(http_headers_get(&h, "a"));
  cr_assert_eq(http_headers_add_str(&h, "b", "2"), 0);
  cr_assert_str_eq(http_headers_get(&h, "b"), "2");
  http_headers_free(&h);
}

Test(http_headers, bad_names_and_values_are_refused) {
  http_headers h;
  http_headers_init(&h, 0, 0);
  cr_assert_eq(http_headers_add(&h, "", 0, "v", 1), HTTP_ERR_BAD_REQUEST);
  cr_assert_eq(http_headers_add(&h, "a b", 3, "v", 1), HTTP_ERR_BAD_REQUEST);
  cr_assert_eq(http_headers_add(&h, "a", 1, "v\r\n", 3), HTTP_ERR_BAD_REQUEST);
  cr_assert_eq(http_headers_append_value(&h, 0, ";", "x", 1), HTTP_ERR_INVALID_ARGUMENT);
  cr_assert_eq(h.count, 0);
  http_headers_free(&h);
}

Test(http_headers, names_compare_ignoring_case_and_whole) {
  cr_assert(http_headers_name_equal("Content-Length", 14, "content-length"));
  cr_assert(!http_headers_name_equal("Content-Length", 14, "content-len"));
  cr_assert(!http_headers_name_equal("Content", 7, "content-length"));
  cr_assert(!http_headers_name_equal("content-lengtx", 14, "content-length"));
  cr_assert(http_headers_name_equal("", 0, ""));
  cr_assert(!http_headers_name_equal("a", 1, ""));
  cr_assert(!http_headers_name_equal("a\0b", 3, "a"));
}

Test(http_headers, append_all_copies_every_field_in_order_within_the_bounds) {
  http_headers from, to;
  http_headers_init(&from, 0, 0);
  http_headers_init(&to, 0, 0);
  cr_assert_eq(http_headers_add_str(&from, "Content-Type", "text/plain"), 0);
  cr_assert_eq(http_headers_add_str(&from, "x-empty", ""), 0);
  cr_assert_eq(http_headers_add_str(&from, "set-cookie", "a=1"), 0);
  cr_assert_eq(http_headers_add_str(&from, "set-cookie", "b=2"), 0);
  cr_assert_eq(http_headers_remove(&from, "x-empty"), 1);
  cr_assert_eq(http_headers_add_str(&to, "date", "now"), 0);
  cr_assert_eq(http_headers_append_all(&to, &from), 0);
  cr_assert_eq(to.count, 4);
  const char *want[][2] = {{"date", "now"},
                           {"content-type", "text/plain"},
                           {"set-cookie", "a=1"},
                           {"set-cookie", "b=2"}};
  for (size_t i = 0; i < 4; i++) {
    cr_assert_str_eq(to.items[i].name, want[i][0]);
    cr_assert_eq(to.items[i].name_len, strlen(want[i][0]));
    cr_assert_str_eq(to.items[i].value, want[i][1]);
    cr_assert_eq(to.items[i].value_len, strlen(want[i][1]));
    cr_assert_neq(to.items[i].value, i > 0 ? from.items[i - 1].value : NULL, "a copy");
  }
  cr_assert_eq(to.bytes, 4 + 3 + from.bytes);
  /* The copies are the list's own: they outlive the source. */
  http_headers_free(&from);
  cr_assert_str_eq(http_headers_get(&to, "content-type"), "text/plain");
  /* Bounds hold, and a refused copy appends nothing. */
  http_headers small;
  http_headers_init(&small, 20, 0);
  cr_assert_eq(http_headers_append_all(&small, &to), HTTP_ERR_HEADERS_TOO_LARGE);
  cr_assert_eq(small.count, 0);
  http_headers few;
  http_headers_init(&few, 0, 3);
  cr_assert_eq(http_headers_append_all(&few, &to), HTTP_ERR_HEADERS_TOO_LARGE);
  cr_assert_eq(few.count, 0);
  cr_assert_eq(http_headers_append_all(&to, &to), HTTP_ERR_INVALID_ARGUMENT);
  http_headers_free(&to);
  http_headers_free(&small);
  http_headers_free(&few);
}

/* Room given by the caller is used first, outgrown without losing a field, never freed
 * by the list, and given back by http_headers_free for the next use. */
Test(http_headers, a_list_uses_the_callers_room_first_and_keeps_it) {
  http_header items[4];
  _Alignas(max_align_t) char text[128];
  http_headers h;
  http_headers_init(&h, 0, 0);
  http_headers_give_room(&h, items, 4, text, sizeof(text));
  cr_assert_eq(h.items, items);
  cr_assert_eq(http_headers_add_str(&h, "Accept", "*/*"), 0);
  cr_assert_eq(http_headers_add_str(&h, "user-agent", "test"), 0);
  cr_assert_eq(h.items, items, "two fields fit the room");
  cr_assert(h.items[0].name >= text && h.items[0].name < text + sizeof(text), "in the room");
  char long_value[200];
  memset(long_value, 'x', sizeof(long_value) - 1);
  long_value[sizeof(long_value) - 1] = '\0';
  for (int i = 0; i < 6; i++) { /* past both rooms */
    char name[16];
    snprintf(name, sizeof(name), "x-%d", i);
    cr_assert_eq(http_headers_add_str(&h, name, i == 3 ? long_value : "v"), 0);
  }
  cr_assert_neq(h.items, items, "outgrown");
  cr_assert_eq(h.count, 8);
  cr_assert_str_eq(http_headers_get(&h, "accept"), "*/*");
  cr_assert_str_eq(http_headers_get(&h, "user-agent"), "test");
  cr_assert_str_eq(http_headers_get(&h, "x-3"), long_value);
  cr_assert_str_eq(http_headers_get(&h, "x-5"), "v");
  http_headers_free(&h); /* frees what it allocated, not the room (ASan would say) */
  cr_assert_eq(h.items, items, "the room again");
  cr_assert_eq(h.count, 0);
  cr_assert_eq(http_headers_add_str(&h, "a", "b"), 0);
  cr_assert_eq(h.items, items);
  cr_assert(h.items[0].name >= text && h.items[0].name < text + sizeof(text));
  http_headers_free(&h);
  /* A list that is not empty, or a room too small for a chunk, is left alone. */
  http_headers other;
  http_headers_init(&other, 0, 0);
  http_headers_give_room(&other, items, 4, text, 8);
  cr_assert_null(other.items);
  cr_assert_eq(http_headers_add_str(&other, "a", "b"), 0);
  http_headers_give_room(&other, items, 4, text, sizeof(text));
  cr_assert_neq(other.items, items);
  http_headers_free(&other);
}

/* A field the caller has checked is copied as it is; the list's bounds still hold. */
Test(http_headers, a_checked_field_is_copied_as_given_within_the_bounds) {
  http_headers h;
  http_headers_init(&h, 20, 2);
  cr_assert_eq(http_headers_add_checked(&h, "accept", 6, "*/*", 3), 0);
  cr_assert_str_eq(h.items[0].name, "accept");
  cr_assert_str_eq(h.items[0].value, "*/*");
  cr_assert_eq(http_headers_add_checked(&h, "x", 1, "0123456789abcdef", 16),
               HTTP_ERR_HEADERS_TOO_LARGE, "the byte bound");
  cr_assert_eq(http_headers_add_checked(&h, "", 0, "v", 1), HTTP_ERR_BAD_REQUEST);
  cr_assert_eq(http_headers_add_checked(&h, "a", 1, "b", 1), 0);
  cr_assert_eq(http_headers_add_checked(&h, "c", 1, "d", 1), HTTP_ERR_HEADERS_TOO_LARGE,
               "the count bound");
  http_headers_free(&h);
}
