// cuda_lib_string.cc - a library that grows standard containers for itself,
// as NVIDIA's CUDA libraries do in a handle's or a plan's setup: a
// std::string (its storage is made by libstdc++'s own code, the library is
// one frame further up) and a std::vector (made by the library's copy of
// the template). cuda_lib_string.sh builds it under a CUDA library's name
// (libcublas.so.13) and under another one, with other sizes (-DBIG: its
// blocks tell apart in the trace).
#include <cstddef>
#include <string>
#include <vector>

#ifdef BIG
#define STRING_CHARS 2000 /* a block of 2001 B */
#define VECTOR_LONGS 197  /* 1576 B */
#else
#define STRING_CHARS 1000 /* a block of 1001 B */
#define VECTOR_LONGS 97   /* 776 B */
#endif

// n times: a string and a vector, each gone before the next.
extern "C" void grow(int n)
{
    for (int i = 0; i < n; i++) {
        std::string s(STRING_CHARS, 'x');
        std::vector<long> v;
        v.reserve(VECTOR_LONGS);
        v.push_back(static_cast<long>(s.size()));
    }
}
