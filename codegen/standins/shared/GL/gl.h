/* cuda-sys-gen stand-in for GL/gl.h (Mesa's or libglvnd's on Linux, the Windows SDK's on
 * Windows): the GL types cudaGL.h names, as the OpenGL specification defines them (4.6
 * core, table 2.2: GLenum and GLuint are unsigned 32-bit integers). Every platform's gl.h
 * spells both `unsigned int`, so one stand-in serves both targets. */
#pragma once
typedef unsigned int GLenum;
typedef unsigned int GLuint;
