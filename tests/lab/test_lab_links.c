/* test_lab_links.c — how many emulated links `speedy lab run` runs at once (run.c,
 * lab_links_count_load; docs/lab.md, "Parallel links"): one fewer after a flagged load,
 * never fewer than one, one more again after LAB_LINKS_RECOVER_AFTER loads in a row within
 * the bound, never more than -j. */
#include <criterion/criterion.h>

#include "run.h"

/* Counts n loads, all late or all within the bound; returns the sum of the changes. */
static int count(lab_links *links, unsigned n, int late) {
  int sum = 0;
  for (unsigned i = 0; i < n; i++) sum += lab_links_count_load(links, late);
  return sum;
}

Test(lab_links, a_flagged_load_takes_one_link_away_down_to_one) {
  lab_links links = {.allowed = 3, .max = 3};
  cr_expect_eq(lab_links_count_load(&links, 1), -1);
  cr_expect_eq(links.allowed, 2);
  cr_expect_eq(lab_links_count_load(&links, 1), -1);
  cr_expect_eq(links.allowed, 1);
  cr_expect_eq(lab_links_count_load(&links, 1), 0, "one link is the least");
  cr_expect_eq(links.allowed, 1);
}

Test(lab_links, the_link_comes_back_after_enough_loads_in_a_row) {
  lab_links links = {.allowed = 2, .max = 2};
  cr_assert_eq(lab_links_count_load(&links, 1), -1);
  cr_expect_eq(count(&links, LAB_LINKS_RECOVER_AFTER - 1, 0), 0);
  cr_expect_eq(links.allowed, 1, "back too early");
  cr_expect_eq(lab_links_count_load(&links, 0), 1);
  cr_expect_eq(links.allowed, 2);
  cr_expect_eq(count(&links, 10 * LAB_LINKS_RECOVER_AFTER, 0), 0, "never more than -j");
  cr_expect_eq(links.allowed, 2);
}

Test(lab_links, a_flag_in_the_streak_starts_it_again) {
  lab_links links = {.allowed = 2, .max = 2};
  cr_assert_eq(lab_links_count_load(&links, 1), -1);
  cr_expect_eq(count(&links, LAB_LINKS_RECOVER_AFTER - 1, 0), 0);
  cr_expect_eq(lab_links_count_load(&links, 1), 0, "already at one link");
  cr_expect_eq(count(&links, LAB_LINKS_RECOVER_AFTER - 1, 0), 0);
  cr_expect_eq(links.allowed, 1, "the streak was not started again");
  cr_expect_eq(lab_links_count_load(&links, 0), 1);
  cr_expect_eq(links.allowed, 2);
}

Test(lab_links, one_link_at_a_time_comes_back) {
  lab_links links = {.allowed = 3, .max = 3};
  cr_assert_eq(count(&links, 2, 1), -2);
  cr_expect_eq(count(&links, LAB_LINKS_RECOVER_AFTER, 0), 1);
  cr_expect_eq(links.allowed, 2);
  cr_expect_eq(count(&links, LAB_LINKS_RECOVER_AFTER, 0), 1);
  cr_expect_eq(links.allowed, 3);
}

Test(lab_links, one_link_stays_one_link) {
  lab_links links = {.allowed = 1, .max = 1};
  cr_expect_eq(count(&links, 5, 1), 0, "-j 1 never changes");
  cr_expect_eq(count(&links, 5 * LAB_LINKS_RECOVER_AFTER, 0), 0);
  cr_expect_eq(links.allowed, 1);
}
