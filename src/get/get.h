/* get.h — `speedy get`, the SPDY client (think curl or spdycat): the entry point the
 * `speedy` program's command table calls. See docs/speedy.1 and get_int.h.
 */
#ifndef SPEEDY_GET_H
#define SPEEDY_GET_H

/* argv[0] is "get". Returns the exit status: 0 every URL fetched, 1 any failed, 2 usage. */
int get_main(int argc, char **argv);

#endif /* SPEEDY_GET_H */
