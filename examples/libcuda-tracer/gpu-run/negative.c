/* Requests at negative versions (-1, -2, -1000, INT_MIN), flags 0-2, asked of the library named
 * on the command line through both lookups where it has them: the result, status and the name
 * dladdr gives the function. Drivers 470-555 read the version as unsigned (measured on Debian). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
typedef int (*V2)(const char*,void**,int,uint64_t,int*);
typedef int (*V1)(const char*,void**,int,uint64_t);
int main(int c,char**a){
  void*h=dlopen(a[1],RTLD_NOW|RTLD_LOCAL); int (*gv)(int*)=dlsym(h,"cuDriverGetVersion"); int dv=0; gv(&dv);
  V2 v2=(V2)dlsym(h,"cuGetProcAddress_v2"); V1 v1=(V1)dlsym(h,"cuGetProcAddress");
  const char* syms[]={"cuCtxCreate","cuMemAlloc","cuMemcpy","cuStreamGetCaptureInfo"};
  int vers[]={-1,-2,-1000,-2147483647-1};
  for(int s=0;s<4;s++) for(int i=0;i<4;i++) for(int f=0;f<3;f++){
    void*p=0; int st=-1; int r2=v2? v2(syms[s],&p,vers[i],f,&st):-9; Dl_info di={0}; if(p) dladdr(p,&di);
    void*q=0; int r1=v1? v1(syms[s],&q,vers[i],f):-9; Dl_info dq={0}; if(q) dladdr(q,&dq);
    printf("%d %s %d f%d: v2 %d st %d %s | v1 %d %s\n",dv,syms[s],vers[i],f,r2,st,di.dli_sname?di.dli_sname:"-",r1,dq.dli_sname?dq.dli_sname:"-");
  }}
