# Hardening.cmake — Debian's hardening flags for everything we build, plus automatic
# zero-initialisation of locals: FORTIFY_SOURCE (not with the sanitizers, which replace
# the same functions, nor without optimisation, where it does nothing), stack protector,
# stack clash protection, CET (-fcf-protection), PIE and full RELRO (-z relro -z now).
# tests/attacks/check_hardening.sh checks the built binaries with readelf.
option(SPEEDY_HARDENING "Build with Debian's hardening flags (PIE, RELRO, FORTIFY ...)" ON)

if(SPEEDY_HARDENING)
  include(CheckCCompilerFlag)
  foreach(flag -fstack-protector-strong -fstack-clash-protection -fcf-protection
               -ftrivial-auto-var-init=zero)
    string(MAKE_C_IDENTIFIER "SPEEDY_HAS${flag}" var)
    check_c_compiler_flag(${flag} ${var})
    if(${var})
      add_compile_options(${flag})
    endif()
  endforeach()
  if(NOT SPEEDY_SANITIZE)
    add_compile_options($<$<NOT:$<CONFIG:Debug>>:-U_FORTIFY_SOURCE>
                        $<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2>)
  endif()
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  include(CheckPIESupported)
  check_pie_supported()
  add_link_options(-Wl,-z,relro,-z,now)
endif()
