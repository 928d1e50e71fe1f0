/* msm_bls12_381_test.c - MSM tests for bls12_381 (see msm_test_body.h). Exit status non-zero on failure. */
#include "curves/bls12_381.h"
#include "msm/msm_test_body.h"

int main(void)
{
    return msm_test_main();
}
