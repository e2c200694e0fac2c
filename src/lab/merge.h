/* merge.h — `speedy lab merge OUT IN...` (merge.c): the results files of a matrix's shards
 * (`speedy lab run --shard K/N`) joined into the file one run of the whole matrix writes.
 */
#ifndef SPEEDY_LAB_MERGE_H
#define SPEEDY_LAB_MERGE_H

#include <stddef.h>
#include <stdio.h>

/* Writes out, a new file: the inputs' matrix line, then every line of theirs in the
 * matrix's canonical order (matrix.h), byte for byte. Refuses, with every reason on
 * messages and nothing written, when out exists, an input cannot be read, has no matrix
 * line or more than one, the inputs' matrix lines differ (naming the fields), a line is
 * none of the matrix's, a key is in two places, or a load or skipped page of the matrix is
 * in no input. Returns 0 when written, 1 when refused or failed. */
int lab_merge(const char *out, const char *const *inputs, size_t n_inputs, FILE *messages);

#endif
