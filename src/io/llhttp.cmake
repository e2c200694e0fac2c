# llhttp.cmake — the `speedy_llhttp` static target: Node's HTTP/1 parser, built from the C
# sources Debian's node-llhttp package ships (/usr/share/llhttp/*.c and
# /usr/share/include/llhttp/llhttp.h). Third-party code: built with its own flags (none of
# our warnings, no -Werror) and linked into the programs only, never into libspeedy.
# Override the location with -DLLHTTP_SOURCE_DIR=DIR (DIR holds llhttp.c, api.c, http.c)
# and -DLLHTTP_INCLUDE_DIR=DIR (DIR holds llhttp.h).
set(LLHTTP_SOURCE_DIR "/usr/share/llhttp" CACHE PATH "Directory with llhttp's C sources")
set(LLHTTP_INCLUDE_DIR "/usr/share/include/llhttp" CACHE PATH "Directory with llhttp.h")

if(NOT TARGET speedy_llhttp)
  foreach(f llhttp.c api.c http.c)
    if(NOT EXISTS "${LLHTTP_SOURCE_DIR}/${f}")
      message(FATAL_ERROR "llhttp source ${LLHTTP_SOURCE_DIR}/${f} not found. Install "
              "Debian's node-llhttp package (apt-get install node-llhttp) or point "
              "-DLLHTTP_SOURCE_DIR at a directory with llhttp.c, api.c and http.c.")
    endif()
  endforeach()
  if(NOT EXISTS "${LLHTTP_INCLUDE_DIR}/llhttp.h")
    message(FATAL_ERROR "llhttp.h not found in ${LLHTTP_INCLUDE_DIR}; set -DLLHTTP_INCLUDE_DIR.")
  endif()
  add_library(speedy_llhttp STATIC
    ${LLHTTP_SOURCE_DIR}/llhttp.c ${LLHTTP_SOURCE_DIR}/api.c ${LLHTTP_SOURCE_DIR}/http.c)
  target_include_directories(speedy_llhttp SYSTEM PUBLIC ${LLHTTP_INCLUDE_DIR})
  target_compile_options(speedy_llhttp PRIVATE -w)
  set_target_properties(speedy_llhttp PROPERTIES C_EXTENSIONS ON POSITION_INDEPENDENT_CODE ON)
endif()
