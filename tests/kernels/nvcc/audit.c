/* LD_AUDIT library: logs every cuGetProcAddress[_v2] request (symbol, version, flags) of a
   process, whoever makes it, by handing out a forwarding wrapper where the symbol is bound
   (PLT or dlsym). Nothing else changes. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef int (*gpa2_t)(const char *, void **, int, unsigned long long, int *);
typedef int (*gpa1_t)(const char *, void **, int, unsigned long long);
static gpa2_t real2;
static gpa1_t real1;
static FILE *logf;
static void open_log(void) {
  if (!logf) {
    const char *p = getenv("GPA_LOG");
    logf = fopen(p ? p : "/tmp/gpa.log", "a");
    if (logf) setvbuf(logf, NULL, _IOLBF, 0);
  }
}
static int wrap1(const char *s, void **p, int v, unsigned long long f);
static int wrap2(const char *s, void **p, int v, unsigned long long f, int *st) {
  int r = real2(s, p, v, f, st);
  /* cuGetProcAddress handed out through itself: hand out the wrapper instead. */
  if (r == 0 && p && *p && strcmp(s, "cuGetProcAddress") == 0) {
    if (v >= 12000) { real2 = (gpa2_t)*p; *p = (void *)wrap2; } else { real1 = (gpa1_t)*p; *p = (void *)wrap1; }
  }
  open_log();
  if (logf) fprintf(logf, "v2 %s %d %llu -> %d %d\n", s, v, f, r, st ? *st : -1);
  return r;
}
static int wrap1(const char *s, void **p, int v, unsigned long long f) {
  int r = real1(s, p, v, f);
  if (r == 0 && p && *p && strcmp(s, "cuGetProcAddress") == 0) {
    if (v >= 12000) { real2 = (gpa2_t)*p; *p = (void *)wrap2; } else { real1 = (gpa1_t)*p; *p = (void *)wrap1; }
  }
  open_log();
  if (logf) fprintf(logf, "v1 %s %d %llu -> %d\n", s, v, f, r);
  return r;
}
unsigned int la_version(unsigned int v) { return LAV_CURRENT; }
unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie) { return LA_FLG_BINDTO | LA_FLG_BINDFROM; }
uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook, uintptr_t *defcook, unsigned int *flags, const char *name) {
  if (strcmp(name, "cuGetProcAddress_v2") == 0) { real2 = (gpa2_t)sym->st_value; return (uintptr_t)wrap2; }
  if (strcmp(name, "cuGetProcAddress") == 0) { real1 = (gpa1_t)sym->st_value; return (uintptr_t)wrap1; }
  return sym->st_value;
}
