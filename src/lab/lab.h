/* lab.h — entry point of the `speedy lab` command (lab_main.c). */
#ifndef SPEEDY_LAB_LAB_H
#define SPEEDY_LAB_LAB_H

/* argv[0] is "lab"; returns the exit status (0, 1 failure, 2 bad usage). */
int lab_main(int argc, char **argv);
/* `speedy lab agree RUN1 RUN2` (agree.c): argv[0] is "agree". */
int lab_agree_main(int argc, char **argv);
/* `speedy lab merge OUT IN...` (merge.c): argv[0] is "merge". */
int lab_merge_main(int argc, char **argv);

#endif
