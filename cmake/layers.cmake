# kreg's layers (docs/architecture.md): each folder of src/ is an object library that may
# include only its own headers and those of the layers below it. The rule is kept by what
# the compiler can see, not by review:
#
# - Each layer target gets an include view of its own, a folder of links under
#   <build>/layers/<target>: one to each src/ folder it may use and one to each public header
#   owned by a layer it may use. src/ and include/ themselves are not on its include path,
#   so an include that points up or sideways is "No such file or directory".
# - Only the layers that talk to the driver or NVRTC (cuda, compiler) see the CUDA toolkit's
#   headers; the others' views hold headers of those names that are an #error, in case the
#   toolkit is also on the compiler's default include path.
# - With KREG_LAYER_LINK_CHECK, each layer is also linked into a shared library of its own
#   with --no-undefined, against the check libraries of the layers it uses and nothing else:
#   a call into a higher layer through a public header (which every layer may declare) is
#   an undefined reference there.
#
#   kreg_layer(<target> FOLDER <src folder> [DEPENDS <layer targets>...]
#              [HEADERS <public headers it owns>...] [LIBS <libraries for the link check>...]
#              [TOOLKIT] [CONTRACTS] SOURCES <files>...)
# CONTRACTS: the layer launches built-in kernels and sees the headers it shares with them,
# kernels/kreg/contracts, as <kreg/contracts/...>.

set(KREG_LAYER_VIEWS ${CMAKE_BINARY_DIR}/layers)

function(kreg_layer target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "TOOLKIT;CONTRACTS" "FOLDER"
                        "DEPENDS;HEADERS;LIBS;SOURCES")
  set(folders ${arg_FOLDER})
  set(headers ${arg_HEADERS})
  foreach(dep IN LISTS arg_DEPENDS)
    get_property(dep_folders TARGET ${dep} PROPERTY KREG_LAYER_FOLDERS)
    get_property(dep_headers TARGET ${dep} PROPERTY KREG_LAYER_HEADERS)
    list(APPEND folders ${dep_folders})
    list(APPEND headers ${dep_headers})
  endforeach()
  list(REMOVE_DUPLICATES folders)
  list(REMOVE_DUPLICATES headers)

  # A relative include ("../x/y.hpp") would step around the view.
  file(GLOB folder_files ${PROJECT_SOURCE_DIR}/src/${arg_FOLDER}/*)
  foreach(file IN LISTS folder_files)
    file(STRINGS ${file} climbing REGEX "^[ \t]*#[ \t]*include[ \t]*\"\\.\\./")
    if(climbing)
      message(FATAL_ERROR "${file}: include a kreg header by its folder, not through ..: "
                          "${climbing}")
    endif()
  endforeach()

  set(view ${KREG_LAYER_VIEWS}/${target})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view}/kreg)
  foreach(folder IN LISTS folders)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${view}/${folder} SYMBOLIC)
  endforeach()
  foreach(header IN LISTS headers)
    get_filename_component(parent ${view}/kreg/${header} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/kreg/${header} ${view}/kreg/${header} SYMBOLIC)
  endforeach()
  if(arg_CONTRACTS)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/kernels/kreg/contracts ${view}/kreg/contracts SYMBOLIC)
  endif()

  add_library(${target} OBJECT ${arg_SOURCES})
  set_property(TARGET ${target} PROPERTY KREG_LAYER_FOLDERS ${folders})
  set_property(TARGET ${target} PROPERTY KREG_LAYER_HEADERS ${headers})
  set_property(TARGET ${target} PROPERTY KREG_LAYER_VIEW ${view})
  target_include_directories(${target} PRIVATE ${view})
  target_include_directories(${target} SYSTEM PRIVATE ${KREG_XXHASH_INCLUDE_DIR}
                                                      ${KREG_JSON_INCLUDE_DIR}
                                                      ${KREG_DLPACK_INCLUDE_DIR})
  if(arg_TOOLKIT)
    target_include_directories(${target} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  else()
    # Where the toolkit's headers also sit on the compiler's default path (/usr/local/include
    # on some machines), leaving its folder out is not enough: the view answers for them first.
    foreach(toolkit_header cuda.h cuda_runtime.h cuda_runtime_api.h cudaTypedefs.h nvrtc.h
                           driver_types.h vector_types.h cuda_fp16.h cuda_bf16.h)
      file(WRITE ${view}/${toolkit_header}
           "#error \"layer ${target} may not include the CUDA toolkit's ${toolkit_header}: "
           "only the cuda and compiler layers see the toolkit (docs/architecture.md)\"\n")
    endforeach()
  endif()
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_definitions(${target} PRIVATE ${KREG_LAYER_DEFINITIONS})
  # -Wrestrict is off because GCC 12 reports false positives inside std::string (GCC bug
  # 105329); clang has no such warning.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion
                                           $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)

  if(KREG_LAYER_LINK_CHECK)
    add_library(${target}_link_check SHARED $<TARGET_OBJECTS:${target}>)
    set(check_deps)
    foreach(dep IN LISTS arg_DEPENDS)
      list(APPEND check_deps ${dep}_link_check)
    endforeach()
    # PUBLIC, so that a layer's check sees every layer below it, as its include view does.
    target_link_libraries(${target}_link_check PUBLIC ${check_deps} ${arg_LIBS})
    target_link_options(${target}_link_check PRIVATE -Wl,--no-undefined)
    set_target_properties(${target}_link_check PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/layers/link_check)
  endif()
endfunction()

# Gives `target` (a probe or a tool built from one layer's files) that layer's include view.
function(kreg_use_layer_view target layer)
  get_property(view TARGET ${layer} PROPERTY KREG_LAYER_VIEW)
  target_include_directories(${target} PRIVATE ${view})
endfunction()
