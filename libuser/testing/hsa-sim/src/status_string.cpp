// SPDX-License-Identifier: MIT
#include "impl.h"

namespace hsasim::impl {

hsa_status_t status_string(hsa_status_t status, const char** string) {
    if (!string)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    const char* s = nullptr;
    switch (static_cast<int>(status)) {
#define HSASIM_STATUS(name, text) \
    case name:                    \
        s = #name ": " text;      \
        break;
        HSASIM_STATUS(HSA_STATUS_SUCCESS, "The function has been executed successfully.")
        HSASIM_STATUS(HSA_STATUS_INFO_BREAK, "A traversal over a list of elements was stopped.")
        HSASIM_STATUS(HSA_STATUS_ERROR, "A generic error has occurred.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_ARGUMENT, "An argument is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
                      "The requested queue cannot be created on this agent.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_ALLOCATION, "The allocation request is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_AGENT, "The agent is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_REGION, "The memory region is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL, "The signal is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_QUEUE, "The queue is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_OUT_OF_RESOURCES,
                      "The runtime could not get the resources it needs.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "An AQL packet is malformed.")
        HSASIM_STATUS(HSA_STATUS_ERROR_RESOURCE_FREE, "A resource could not be released.")
        HSASIM_STATUS(HSA_STATUS_ERROR_NOT_INITIALIZED, "The runtime is not initialized.")
        HSASIM_STATUS(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW,
                      "The runtime reference count reached its maximum.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS, "The arguments are not compatible.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_INDEX, "The index is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_ISA,
                      "The instruction set architecture is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_ISA_NAME,
                      "The instruction set architecture name is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "The code object is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE, "The executable is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_FROZEN_EXECUTABLE, "The executable is frozen.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME, "No symbol has this name.")
        HSASIM_STATUS(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED, "The variable is already defined.")
        HSASIM_STATUS(HSA_STATUS_ERROR_VARIABLE_UNDEFINED, "The variable is undefined.")
        HSASIM_STATUS(HSA_STATUS_ERROR_EXCEPTION, "An HSAIL operation raised an exception.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_CODE_SYMBOL, "The code object symbol is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
                      "The executable symbol is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_FILE, "The file descriptor is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
                      "The code object reader is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_CACHE, "The cache is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_WAVEFRONT, "The wavefront is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP, "The signal group is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_RUNTIME_STATE,
                      "The runtime is not in a state that allows this operation.")
        HSASIM_STATUS(HSA_STATUS_ERROR_FATAL, "The queue hit an unrecoverable error.")
        HSASIM_STATUS(HSA_STATUS_ERROR_INVALID_MEMORY_POOL, "The memory pool is not valid.")
        HSASIM_STATUS(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                      "An agent accessed memory outside its aperture.")
        HSASIM_STATUS(HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
                      "An agent executed an illegal instruction.")
        HSASIM_STATUS(HSA_STATUS_ERROR_MEMORY_FAULT, "An agent raised a memory fault.")
        HSASIM_STATUS(HSA_STATUS_CU_MASK_REDUCED, "The CU mask was reduced.")
#undef HSASIM_STATUS
        default:
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    *string = s;
    return HSA_STATUS_SUCCESS;
}

}  // namespace hsasim::impl
