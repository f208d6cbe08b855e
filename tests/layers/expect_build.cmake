# Builds one probe target of the build tree and checks the outcome:
#   cmake -DBUILD_DIR=... -DTARGET=... -DEXPECT=pass|fail [-DPATTERN=regex] -P expect_build.cmake
# A probe that must fail passes only when its output matches PATTERN, so that it cannot pass
# by failing for another reason.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(EXPECT STREQUAL "pass")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${TARGET} should build, but did not:\n${output}")
  endif()
elseif(result EQUAL 0)
  message(FATAL_ERROR "${TARGET} should not build, but did:\n${output}")
elseif(NOT output MATCHES "${PATTERN}")
  message(FATAL_ERROR "${TARGET} failed, but not with /${PATTERN}/:\n${output}")
else()
  message(STATUS "${TARGET} failed as it must: matched /${PATTERN}/")
endif()
