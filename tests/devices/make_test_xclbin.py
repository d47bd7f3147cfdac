#!/usr/bin/python3
"""Writes tests/devices/data/vadd.xclbin, the xclbin the XRT device tests load.

A minimal but structurally valid axlf (xrt/xclbin.h of Debian's XRT 2.13): the
header, an IP_LAYOUT section with one kernel compute unit "vadd:vadd_1" and an
EMBEDDED_METADATA section whose XML gives vadd's arguments. It carries no
bitstream, so no card could run it; tests/devices/fake_xrt_driver.c runs vadd
with exactly the register offsets written here.

The offsets below were checked against struct axlf with offsetof and sizeof
(axlf 496 bytes, its m_header at 304 and m_sections at 456; axlf_header's
m_length at 0, versions at 24, m_mode at 28, m_platformVBNV at 48, uuid at 112,
m_numSections at 144; axlf_section_header 40 bytes; ip_layout's m_ip_data at
8; ip_data 80 bytes with m_base_address at 8 and m_name at 16).

Usage: python3 tests/devices/make_test_xclbin.py [output path]
The output is the same bytes on every run.
"""

import os
import struct
import sys

# enum axlf_section_kind and enum IP_TYPE.
EMBEDDED_METADATA = 2
IP_LAYOUT = 8
IP_KERNEL = 1

HEADER_OFFSET = 304  # axlf.m_header
SECTION_HEADERS_OFFSET = 456  # axlf.m_sections
SECTION_HEADER_BYTES = 40

UUID = bytes(range(0x10, 0x20))
COMPUTE_UNIT_BASE_ADDRESS = 0x1800000

METADATA = """<?xml version="1.0" encoding="UTF-8"?>
<project name="vadd">
  <platform vendor="xilinx" boardid="relay_test" name="relay_test_platform">
    <device name="fpga0">
      <core name="OCL_REGION_0" target="hw" type="clc_region">
        <!-- vadd(const int* in1, const int* in2, int* out, int size) -->
        <kernel name="vadd" language="c" hwControlProtocol="ap_ctrl_hs">
          <port name="M_AXI_GMEM" mode="master" range="0xFFFFFFFF" dataWidth="32" portType="addressable" base="0x0"/>
          <port name="S_AXI_CONTROL" mode="slave" range="0x1000" dataWidth="32" portType="addressable" base="0x0"/>
          <arg name="in1" addressQualifier="1" id="0" port="M_AXI_GMEM" size="0x8" offset="0x10" hostOffset="0x0" hostSize="0x8" type="int*"/>
          <arg name="in2" addressQualifier="1" id="1" port="M_AXI_GMEM" size="0x8" offset="0x1c" hostOffset="0x0" hostSize="0x8" type="int*"/>
          <arg name="out" addressQualifier="1" id="2" port="M_AXI_GMEM" size="0x8" offset="0x28" hostOffset="0x0" hostSize="0x8" type="int*"/>
          <arg name="size" addressQualifier="0" id="3" port="S_AXI_CONTROL" size="0x4" offset="0x34" hostOffset="0x0" hostSize="0x4" type="int"/>
          <instance name="vadd_1">
            <addrRemap base="0x1800000" range="0x10000" port="S_AXI_CONTROL"/>
          </instance>
        </kernel>
      </core>
    </device>
  </platform>
</project>
"""


def align8(size):
    return (size + 7) // 8 * 8


def ip_layout():
    name = b"vadd:vadd_1"
    # ip_data: m_type, properties (interrupt enabled, ap_ctrl_hs),
    # m_base_address, m_name[64].
    entry = struct.pack("<IIQ64s", IP_KERNEL, 0x1, COMPUTE_UNIT_BASE_ADDRESS, name)
    assert len(entry) == 80
    return struct.pack("<i4x", 1) + entry


def xclbin():
    sections = [
        (IP_LAYOUT, b"ip_layout", ip_layout()),
        (EMBEDDED_METADATA, b"metadata", METADATA.encode() + b"\0"),
    ]
    offset = align8(SECTION_HEADERS_OFFSET + SECTION_HEADER_BYTES * len(sections))
    section_headers = b""
    data = b""
    for kind, name, payload in sections:
        section_headers += struct.pack("<I16s4xQQ", kind, name, offset + len(data), len(payload))
        data += payload + b"\0" * (align8(len(payload)) - len(payload))
    length = offset + len(data)

    header = struct.pack(
        "<QQQHBBHH16s64s16s16sI4x",
        length,  # m_length
        0,  # m_timeStamp: fixed, so that the output does not change
        0,  # m_featureRomTimeStamp
        466,  # m_versionPatch: 2.13.466, Debian's XRT
        2,  # m_versionMajor
        13,  # m_versionMinor
        0,  # m_mode: XCLBIN_FLAT
        0,  # m_actionMask
        b"",  # rom_uuid
        b"relay:test:vadd:1",  # m_platformVBNV
        UUID,  # uuid
        b"",  # m_debug_bin
        len(sections),  # m_numSections
    )
    assert len(header) == 152
    top = (
        b"xclbin2\0"
        + struct.pack("<i", -1)  # m_signature_length: not signed
        + b"\xff" * 28  # reserved
        + b"\xff" * 256  # m_keyBlock
        + struct.pack("<Q", 0)  # m_uniqueId
    )
    assert len(top) == HEADER_OFFSET
    image = top + header + section_headers
    image += b"\0" * (offset - len(image)) + data
    assert len(image) == length
    return image


def main():
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "vadd.xclbin")
    path = sys.argv[1] if len(sys.argv) > 1 else default
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as output:
        output.write(xclbin())


if __name__ == "__main__":
    main()
