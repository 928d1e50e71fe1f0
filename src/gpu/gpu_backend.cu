/* gpu_backend.cu - curve dispatch of the CUDA backend (groth16/backend.h) and the device
 * count. A machine without a GPU or driver gets a clean "no CUDA device found". */
#include <cuda_runtime.h>

extern "C" {
#include "groth16/backend.h"
}

extern "C" cuzk_backend *gpu_backend_create_bn254(int device, char *err);
extern "C" cuzk_backend *gpu_backend_create_bls12_381(int device, char *err);

extern "C" cuzk_backend *gpu_backend_create(cuzk_curve_id curve, int device, char *err)
{
    switch (curve) {
    case CURVE_BN254: return gpu_backend_create_bn254(device, err);
    case CURVE_BLS12_381: return gpu_backend_create_bls12_381(device, err);
    default: break;
    }
    cuzk_errf(err, CUZK_ECURVE, "gpu: unknown curve %d", (int)curve);
    return nullptr;
}

extern "C" int gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n;
}
