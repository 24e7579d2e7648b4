# cmake -DSRC=SOURCE_DIR -DARCHS=LIST -DVIRTUAL=N -P virtual_arch.cmake: prints the nvcc option
# cmake/KernelList.cmake's tr_virtual_arch_option gives for a deployment build with
# TUNEDREDUCE_CUDA_ARCHS=LIST and TUNEDREDUCE_DEPLOY_VIRTUAL_ARCH=N, or stops as it does.
# tests/deploy/check_virtual_arch.sh runs it.
include(${SRC}/cmake/KernelList.cmake)
tr_virtual_arch_option("${ARCHS}" "${VIRTUAL}" option)
message("${option}")
