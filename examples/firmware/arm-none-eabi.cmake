# Toolchain file for arm-none-eabi-gcc (Debian's gcc-arm-none-eabi and newlib). The core's
# flags (-mcpu, -mfpu, -mfloat-abi) are not here: CMakeLists.txt takes them from kiln's
# target (kiln_target_cc_flags), so the compiler and kiln agree.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
