/* msm_bn254_test.c - MSM tests for bn254 (see msm_test_body.h). Exit status non-zero on failure. */
#include "curves/bn254.h"
#include "msm/msm_test_body.h"

int main(void)
{
    return msm_test_main();
}
