/* cuda_lib_new.c - a library that allocates small blocks for itself with
 * C++ operator new, as NVIDIA's CUDA libraries do in a kernel launch or a
 * handle's setup. cuda_lib_new.sh builds it under a CUDA library's name
 * (libnvrtc.so.13) and under another one. */
#include <stddef.h>

void *_Znwm(size_t size); /* operator new(std::size_t) */
void _ZdlPv(void *ptr);   /* operator delete(void *) */

/* n blocks of size bytes, each deleted before the next. */
void churn(int n, size_t size)
{
    for (int i = 0; i < n; i++)
        _ZdlPv(_Znwm(size));
}
