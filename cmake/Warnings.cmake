# Warning flags for every C target in the project (third-party code is built with its own).
set(SPEEDY_WARNING_FLAGS
    -Wall -Wextra -Wformat=2 -Wshadow -Wvla -Wimplicit-fallthrough
    -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith -Wundef)
if(SPEEDY_WERROR)
  list(APPEND SPEEDY_WARNING_FLAGS -Werror)
endif()

# speedy_target_warnings(target): apply the project's warnings to one target.
function(speedy_target_warnings target)
  target_compile_options(${target} PRIVATE ${SPEEDY_WARNING_FLAGS})
endfunction()
