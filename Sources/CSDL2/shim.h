// SDL2 for the studio window (WobbleStudio/SDLWindow.swift is the only
// file that calls it). pkg-config sdl2 adds -I/usr/include/SDL2.
#include <SDL.h>
