/* schema.h — the store's schema migrations (schema.c), run by hz_store_open() (store.c). */
#pragma once

#include "store-private.h"

G_BEGIN_DECLS

/** Bring the schema from its current user_version to HZ_STORE_SCHEMA_VERSION, one
 *  transaction (BEGIN IMMEDIATE) per step; re-reads the version under the write lock so
 *  concurrent openers migrate once. Sets store->schema_version. FALSE with `error` set
 *  (HZ_STORE_ERROR_*) when a step fails; the steps done before it stay. */
gboolean hz_schema_migrate (HzStore *store, GError **error);

G_END_DECLS
