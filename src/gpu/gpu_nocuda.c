/* gpu_nocuda.c - the CUDA backend entry points for a build without nvcc.
 *
 * The Makefile compiles this file only when CUDA is not built (it skips *_nocuda.c
 * otherwise), so a CPU-only cuzk still links and says clearly why --backend gpu fails.
 */
#include "groth16/backend.h"

cuzk_backend *gpu_backend_create(cuzk_curve_id curve, int device, char *err)
{
    (void)curve;
    (void)device;
    cuzk_errf(err, CUZK_ENODEV, "this cuzk was built without CUDA");
    return NULL;
}

int gpu_device_count(void)
{
    return 0;
}
