# fake-release.cmake: the fake engine and the release archives it is
# packed into: fake_release() for the tests, and the demo's BaseRT
# releases (config/demo/releases.txt) with their weights file.
# Included from tests/CMakeLists.txt; archives are built with the ALL
# target "fake-releases".

# What the stand-ins share: dying, whole writes, the loopback listener,
# release.conf.  Built without the sanitizers, as they are.
add_library(fake_common STATIC lib/fake-common.c lib/fake-release.c)
target_compile_options(fake_common PRIVATE -fno-sanitize=all)
add_executable(fake-engine lib/fake-engine.c lib/fake-engine_release.c
  lib/fake-engine_cost.c lib/fake-engine_bench.c lib/fake-engine_serve.c)
target_link_libraries(fake-engine PRIVATE fake_common PkgConfig::JANSSON m)
# It stands in for a foreign binary: the sanitizers' handlers would turn
# its SIGSEGV into an exit status, and their start-up into overhead.
target_compile_options(fake-engine PRIVATE -fno-sanitize=all)
target_link_options(fake-engine PRIVATE -fno-sanitize=all)

# The streaming server under load, for serve mode: fake_serve_release().
add_executable(fake-server lib/fake-server.c)
target_link_libraries(fake-server PRIVATE fake_common PkgConfig::JANSSON)
target_compile_options(fake-server PRIVATE -fno-sanitize=all)
target_link_options(fake-server PRIVATE -fno-sanitize=all)

add_custom_target(fake-releases ALL)

# Pack ARCHIVE (a .tar.gz) holding bin/fake-engine (or the target that
# FAKE_RELEASE_BINARY names) and release.conf, the latter made of
# "version = VERSION" and one line per key=value in ARGN.  STAGE is the
# unpacked copy, usable as a release root as it is.
function(fake_release_pack archive stage version)
  if(NOT FAKE_RELEASE_BINARY)
    set(FAKE_RELEASE_BINARY fake-engine)
  endif()
  set(conf "# fake-engine release parameters (generated)\n")
  string(APPEND conf "version = ${version}\n")
  foreach(kv IN LISTS ARGN)
    if(NOT kv MATCHES "^([a-z_]+)=(.*)$")
      message(FATAL_ERROR "fake release ${version}: '${kv}' is not key=value")
    endif()
    string(APPEND conf "${CMAKE_MATCH_1} = ${CMAKE_MATCH_2}\n")
  endforeach()
  # Rewritten only when the parameters change, so archives are not
  # repacked on every configure.
  file(CONFIGURE OUTPUT ${stage}.conf CONTENT "${conf}" @ONLY)
  get_filename_component(name ${archive} NAME)
  get_filename_component(archive_dir ${archive} DIRECTORY)
  # Named by its place in the build tree: archives of one name may be
  # packed into two folders.
  file(RELATIVE_PATH where ${CMAKE_BINARY_DIR} ${archive})
  add_custom_command(OUTPUT ${archive}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${stage}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${archive_dir}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${stage}/bin
    COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${FAKE_RELEASE_BINARY}>
      ${stage}/bin/${FAKE_RELEASE_BINARY}
    COMMAND ${CMAKE_COMMAND} -E copy ${stage}.conf ${stage}/release.conf
    COMMAND ${CMAKE_COMMAND} -E chdir ${stage}
      ${CMAKE_COMMAND} -E tar czf ${archive}
      "--mtime=2024-01-01 00:00:00 UTC" bin release.conf
    DEPENDS ${FAKE_RELEASE_BINARY} ${stage}.conf
    COMMENT "Packing ${name}"
    VERBATIM)
  string(MAKE_C_IDENTIFIER "fake-release-${where}" target)
  add_custom_target(${target} DEPENDS ${archive})
  add_dependencies(fake-releases ${target})
endfunction()

# fake_release(NAME VERSION [key=value...]): a release for the tests, as
# <build>/tests/releases/NAME-VERSION.tar.gz, unpacked beside it in
# <build>/tests/releases/NAME-VERSION/ (bin/fake-engine, release.conf).
function(fake_release name version)
  set(dir ${CMAKE_BINARY_DIR}/tests/releases)
  fake_release_pack(${dir}/${name}-${version}.tar.gz
    ${dir}/${name}-${version} ${version} ${ARGN})
endfunction()

# fake_serve_release(NAME VERSION [key=value...]): the same for
# fake-server, the streaming server under load.
function(fake_serve_release name version)
  set(FAKE_RELEASE_BINARY fake-server)
  fake_release(${name} ${version} ${ARGN})
endfunction()

# Small, quick releases: one that works and one per failure mode.
set(FAKE_QUICK fixed_us=2000 prefill_us_per_token=20 decode_us_per_token=100
  noise_cv=0)
fake_release(fast 1.0.0 ${FAKE_QUICK})
foreach(mode crash hang hang-ignore-term setsid-linger garbage exit)
  fake_release(${mode} 1.0.0 ${FAKE_QUICK} fail=${mode})
endforeach()

# The demo: one line per version in config/demo/releases.txt, packed as
# <build>/demo/releases/basert-VERSION.tar.gz, and a pinned weights file.
set(demo_list ${PROJECT_SOURCE_DIR}/config/demo/releases.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${demo_list})
file(STRINGS ${demo_list} demo_lines)
foreach(line IN LISTS demo_lines)
  if(line MATCHES "^[ \t]*(#|$)")
    continue()
  endif()
  separate_arguments(fields UNIX_COMMAND "${line}")
  list(POP_FRONT fields version)
  fake_release_pack(${CMAKE_BINARY_DIR}/demo/releases/basert-${version}.tar.gz
    ${CMAKE_BINARY_DIR}/demo/stage/basert-${version} ${version} ${fields})
  # The same releases timing their samples by the CPU clock, in
  # <build>/tests/demo-cpu/: the story with figures that another build
  # beside the tests does not move, for the tests that check the
  # analysis rather than the wall clock.
  fake_release_pack(
    ${CMAKE_BINARY_DIR}/tests/demo-cpu/basert-${version}.tar.gz
    ${CMAKE_BINARY_DIR}/tests/demo-cpu/stage/basert-${version} ${version}
    ${fields} clock=cpu)
endforeach()

# A few KB of fixed bytes: the demo's weights, the same on every machine.
set(weights "FAKEWEIGHTS 1\n")
set(chain "bisectd demo weights")
foreach(i RANGE 1 63)
  string(SHA256 chain "${chain}")
  string(APPEND weights "${chain}\n")
endforeach()
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/demo/weights.bin
  CONTENT "${weights}" @ONLY)
