# Shared build conventions: warnings, sanitizers, and test registration with CTest labels.

# Warnings as an INTERFACE target so every target opts in the same way.
add_library(dimmap_warnings INTERFACE)
target_compile_options(dimmap_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wno-unused-parameter>)

if(DIMMAP_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(DIMMAP_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT DIMMAP_SANITIZE STREQUAL "")
  message(FATAL_ERROR "DIMMAP_SANITIZE must be '', address or thread (got '${DIMMAP_SANITIZE}')")
endif()

include(GoogleTest)

# dimmap_add_gtest(NAME SOURCES a.cpp b.cpp LIBS x y LABELS unit [TIMEOUT s] [RESOURCE_LOCK name])
# Builds a Google Test binary and registers each test case with CTest under the labels.
function(dimmap_add_gtest name)
  cmake_parse_arguments(ARG "" "TIMEOUT;RESOURCE_LOCK" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  set(lock)
  if(ARG_RESOURCE_LOCK)
    set(lock RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main dimmap_warnings)
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} SKIP_RETURN_CODE 77 ${lock})
endfunction()

# dimmap_add_script_test(NAME COMMAND cmd args... LABELS integration [TIMEOUT s] [ENV k=v ...])
# Registers a command (usually a shell or Python script) as a test. Exit 77 means "skipped".
function(dimmap_add_script_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;WORKING_DIRECTORY" "COMMAND;LABELS;ENV" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS integration)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  if(NOT ARG_WORKING_DIRECTORY)
    set(ARG_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  add_test(NAME ${name} COMMAND ${ARG_COMMAND} WORKING_DIRECTORY ${ARG_WORKING_DIRECTORY})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    SKIP_RETURN_CODE 77
    ENVIRONMENT "DIMMAP_BUILD_DIR=${CMAKE_BINARY_DIR};DIMMAP_SOURCE_DIR=${CMAKE_SOURCE_DIR};${ARG_ENV}")
endfunction()
