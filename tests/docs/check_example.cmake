# check_example.cmake — fails when docs/libspeedy.md no longer shows docs/examples/hello.c
# verbatim, so the guide's example is always the one the tests compile and run.
file(READ "${DOC}" doc)
file(READ "${EXAMPLE}" example)
string(STRIP "${example}" example)
string(FIND "${doc}" "${example}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC} does not contain ${EXAMPLE} verbatim; paste the example again")
endif()
