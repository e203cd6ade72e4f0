import Foundation
import XCTest
@_exported import WobbleTestSupport
import WobbleCore
@testable import WobbleMedia
import WobbleSystem

/// A temporary folder addressed by plain paths: the shared `Sandbox`.
typealias Scratch = Sandbox

/// Runs ImageMagick's `convert` with the given arguments.
func convert(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["convert"] + arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw MediaError("convert \(arguments.joined(separator: " ")) failed")
    }
}

/// A small RGBA test image with a gradient and varied alpha.
func testImage(width: Int = 7, height: Int = 5) -> RGBAImage {
    var pixels: [UInt8] = []
    for y in 0..<height {
        for x in 0..<width {
            pixels += [UInt8(x * 255 / max(1, width - 1)), UInt8(y * 255 / max(1, height - 1)),
                       UInt8((x * 37 + y * 91) & 255), UInt8((x * 53 + y * 17 + 3) & 255)]
        }
    }
    return RGBAImage(width: width, height: height, pixels: pixels)
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The MediaError message a throwing call produced (fails the test otherwise).
func mediaErrorMessage<T>(_ body: () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> String? {
    do {
        _ = try body()
        XCTFail("expected a MediaError", file: file, line: line)
        return nil
    } catch let error as MediaError {
        return error.message
    } catch {
        XCTFail("expected a MediaError, got \(error)", file: file, line: line)
        return nil
    }
}

/// The permission bits of a path.
func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// CRC-32 as PNG chunks use it (for crafting and mutating PNG files).
func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return crc ^ 0xFFFF_FFFF
}

/// Big-endian 32-bit read and write in a byte array.
func readU32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
}
func writeU32(_ bytes: inout [UInt8], _ at: Int, _ value: UInt32) {
    for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) }
}

/// Sets a PNG's IHDR width and height and fixes the chunk's CRC.
func patchPNGSize(_ png: [UInt8], width: UInt32, height: UInt32) -> [UInt8] {
    var bytes = png
    // Signature (8), length (4), "IHDR" (4), width at 16, height at 20, CRC at 29.
    writeU32(&bytes, 16, width)
    writeU32(&bytes, 20, height)
    writeU32(&bytes, 29, crc32(bytes[12..<29]))
    return bytes
}

/// Raw 8-bit samples → an image file through ImageMagick.
func makeImage(_ samples: [UInt8], width: Int, height: Int, map: String, at path: String, options: [String],
               format: String = "") throws {
    let raw = path + ".raw"
    try writeBytes(samples, to: raw)
    defer { unlink(raw) }
    try convert(["-size", "\(width)x\(height)", "-depth", "8", "\(map):\(raw)"] + options + [format + path])
}
