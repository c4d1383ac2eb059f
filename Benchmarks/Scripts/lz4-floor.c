// The floor of a warm start's load on this machine: the time to decompress a snapshot's LZ4
// frames into fresh memory on two threads, with nothing else done — no checksum, no cell check,
// no copy, no index. A warm start cannot load the archive faster than this.
//
//   gcc -O2 -o lz4-floor Benchmarks/Scripts/lz4-floor.c -llz4 -lpthread
//   ./lz4-floor ~/.local/share/strata/demo.snapshot [mode]
//
// Each LZ4 frame in the file (found by the frame magic number) is decompressed once to learn
// its size; then, timed, one fresh mapping holds every frame's contents, one after another, and
// two threads take the frames in turn. mode is a sum of: 1 fault each frame's range in first
// with MADV_POPULATE_WRITE (as the load does), 2 decompress (else only write the bytes with
// memset: the cost of fresh memory alone), 4 advise the mapping into transparent huge pages
// (as the load does). Prints the first run — what a fresh process, as a launch, meets — and the
// median of 7; each run maps memory anew, which the kernel may then find already zeroed.
#define _GNU_SOURCE
#include <fcntl.h>
#include <lz4frame.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
enum { maxFrames = 4096, threads = 2, runs = 7 };
static const unsigned char *file;
static size_t starts[maxFrames], ends[maxFrames], sizes[maxFrames], places[maxFrames];
static int frames, mode;
static unsigned char *destination;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static size_t decompress(int frame, unsigned char *out, size_t capacity) {
    LZ4F_dctx *context;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&context, LZ4F_VERSION))) exit(1);
    size_t in = ends[frame] - starts[frame], out_size = capacity;
    size_t result = LZ4F_decompress(context, out, &out_size, file + starts[frame], &in, NULL);
    if (LZ4F_isError(result)) {
        fprintf(stderr, "frame %d: %s\n", frame, LZ4F_getErrorName(result));
        exit(1);
    }
    LZ4F_freeDecompressionContext(context);
    return out_size;
}

static void *work(void *argument) {
    for (int frame = (int)(intptr_t)argument; frame < frames; frame += threads) {
        unsigned char *out = destination + places[frame];
        if (mode & 1) {
            uintptr_t page = (uintptr_t)out & ~(uintptr_t)4095;
            madvise((void *)page, (uintptr_t)out + sizes[frame] - page, MADV_POPULATE_WRITE);
        }
        if (mode & 2) decompress(frame, out, sizes[frame]);
        else memset(out, 1, sizes[frame]);
    }
    return NULL;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: lz4-floor SNAPSHOT [mode]\n");
        return 2;
    }
    int descriptor = open(argv[1], O_RDONLY);
    struct stat status;
    if (descriptor < 0 || fstat(descriptor, &status) != 0) {
        perror(argv[1]);
        return 1;
    }
    file = mmap(NULL, status.st_size, PROT_READ, MAP_PRIVATE, descriptor, 0);
    mode = argc > 2 ? atoi(argv[2]) : 7;
    for (size_t at = 0; at + 4 <= (size_t)status.st_size && frames < maxFrames; at++) {
        if (file[at] == 0x04 && file[at + 1] == 0x22 && file[at + 2] == 0x4D && file[at + 3] == 0x18) {
            if (frames > 0) ends[frames - 1] = at;
            starts[frames++] = at;
        }
    }
    if (frames == 0) return 1;
    ends[frames - 1] = status.st_size;
    size_t total = 0, scratchSize = 64 << 20;
    unsigned char *scratch = malloc(scratchSize);
    for (int frame = 0; frame < frames; frame++) {
        sizes[frame] = decompress(frame, scratch, scratchSize);
        places[frame] = total;
        total += sizes[frame];
    }
    free(scratch);
    double times[runs];
    size_t huge = 2 << 20;
    for (int run = 0; run < runs; run++) {
        double start = now();
        unsigned char *mapped = mmap(NULL, total + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        destination = (unsigned char *)(((uintptr_t)mapped + huge - 1) & ~(uintptr_t)(huge - 1));
        if (mode & 4) madvise(destination, total & ~(huge - 1), MADV_HUGEPAGE);
        pthread_t helpers[threads];
        for (intptr_t thread = 0; thread < threads; thread++) pthread_create(&helpers[thread], NULL, work, (void *)thread);
        for (int thread = 0; thread < threads; thread++) pthread_join(helpers[thread], NULL);
        times[run] = now() - start;
        munmap(mapped, total + huge);
    }
    double first = times[0];
    qsort(times, runs, sizeof times[0], compare);
    printf("%d frames, %.1f MB, mode %d, %d threads: first run %.2f ms; median of %d %.2f ms (min %.2f, max %.2f)\n", frames,
           total / 1e6, mode, threads, first, runs, times[runs / 2], times[0], times[runs - 1]);
    return 0;
}
