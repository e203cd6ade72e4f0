// SDL2 for the studio window and its sound (WobbleStudio/SDLWindow.swift
// and SDLAudio.swift are the only files that call it). pkg-config sdl2 adds -I/usr/include/SDL2.
#include <SDL.h>
// The window's X display (its connection's socket, watched for a hang-up).
#include <SDL_syswm.h>
// Xlib, for one call: an X error handler that reports instead of exiting
// (Xlib's default ends the process on any error, such as a late request on
// a window being destroyed).
#include <X11/Xlib.h>
