/* tools/hanzo-cmd.h — subcommand entry points of the `hanzo` CLI (see hanzo-cmds.def). */
#pragma once
#define HZ_CMD(name, summary) int hz_cmd_##name (int argc, char **argv);
#include "hanzo-cmds.def"
#undef HZ_CMD
