# SPDX-License-Identifier: MIT
# Tests of the activity page (amdqp/activity.h, activity.hpp) and of the hint
# API. Included from this folder's CMakeLists.txt. They test the writer's
# internals, so they link the static library and see src/.
add_executable(amdqp_activity_test
  ${CMAKE_CURRENT_LIST_DIR}/activity_abi_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/activity_page_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/activity_reader_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/busy_announce_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hint_test.cpp)
target_link_libraries(amdqp_activity_test PRIVATE amdqp::amdqp_static GTest::gtest_main ${CMAKE_DL_LIBS})
target_include_directories(amdqp_activity_test PRIVATE "${CMAKE_CURRENT_LIST_DIR}/../src")
# The shared library, copied to two paths by the "loaded twice" test.
target_compile_definitions(amdqp_activity_test PRIVATE
  AMDQP_TEST_SHARED_LIB="$<TARGET_FILE:amdqp>")
add_dependencies(amdqp_activity_test amdqp)
target_compile_options(amdqp_activity_test PRIVATE ${AMDQP_USER_WARNINGS})
gtest_discover_tests(amdqp_activity_test TEST_PREFIX "libamdqp." DISCOVERY_TIMEOUT 30)

# amdqp/activity.h is a C header too.
add_executable(amdqp_activity_c_header_test ${CMAKE_CURRENT_LIST_DIR}/activity_c_header_test.c)
target_link_libraries(amdqp_activity_c_header_test PRIVATE amdqp::amdqp)
target_compile_options(amdqp_activity_c_header_test PRIVATE -std=c11 -Wall -Wextra -Wpedantic)
add_test(NAME libamdqp.activity_c_header COMMAND amdqp_activity_c_header_test)
