// SDL2 for the studio window and its sound (WobbleStudio/SDLWindow.swift
// and SDLAudio.swift are the only files that call it), named by their
// folder: the headers include each other by their own names ("SDL_main.h"),
// so no -I/usr/include/SDL2 is needed (and sdl2.pc's -D_REENTRANT, which
// SwiftPM refuses with a warning, is not read).
#include <SDL2/SDL.h>
// The window's X display (its connection's socket, watched for a hang-up).
#include <SDL2/SDL_syswm.h>
// Xlib, for one call: an X error handler that reports instead of exiting
// (Xlib's default ends the process on any error, such as a late request on
// a window being destroyed).
#include <X11/Xlib.h>
