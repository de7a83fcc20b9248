/* Federation credentials and Hub tokens in the Secret Service (libsecret). Run by with-keyring.sh inside a
 * private D-Bus session with a throwaway unlocked gnome-keyring; skips (with the reason)
 * only when no Secret Service is reachable. */
#include "credentials.h"
#include "egress.h"
#include "egress-test-util.h"

static gboolean
secret_service_reachable (void)
{
  g_autoptr (GError) error = NULL;
  char *endpoint = NULL, *token = NULL;
  if (hz_credentials_lookup (&endpoint, &token, NULL, &error))
    {
      g_free (endpoint);
      hz_credentials_free_token (token);
      return TRUE;
    }
  if (g_error_matches (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_UNAVAILABLE))
    {
      g_autofree char *msg = g_strdup_printf ("no Secret Service reachable (run under "
                                              "tests/egress/with-keyring.sh): %s", error->message);
      g_test_skip (msg);
      return FALSE;
    }
  return TRUE;
}

static void
test_store_lookup_clear (void)
{
  if (!secret_service_reachable ())
    return;
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_credentials_clear (NULL, &error));
  g_assert_no_error (error);
  char *endpoint = NULL, *token = NULL;
  g_assert_false (hz_credentials_lookup (&endpoint, &token, NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_false (hz_credentials_store ("ftp://x", "t", NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (hz_credentials_store ("https://fed.example.org", "", NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_INVALID);
  g_clear_error (&error);

  g_assert_true (hz_credentials_store ("https://old.example.org", "old-token", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (hz_credentials_store ("http://127.0.0.1:9", "s3kr1t-t0ken-XYZ", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (hz_credentials_lookup (&endpoint, &token, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (endpoint, ==, "http://127.0.0.1:9");   /* replaced, not added */
  g_assert_cmpstr (token, ==, "s3kr1t-t0ken-XYZ");
  g_free (endpoint);
  hz_credentials_free_token (token);

  /* the client built from the keyring uses them; the token never reaches the database */
  HzStore *store = hzt_tmp_store ();
  g_autofree char *db_path = g_strdup (hz_store_get_path (store));
  g_autoptr (HzDeltaConfig) cfg = hzt_config ();
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, HZT_BASE);
  g_autoptr (HzDpRelease) r = hz_dp_release (d, 1.0, 2.0, 1, store, NULL, &error);
  g_assert_no_error (error);
  HzEgress *e = hz_egress_new_from_keyring (store, cfg, NULL, &error);
  g_assert_no_error (error);
  const HzEgressRetry once = { 1, 0, 0, 1 };
  hz_egress_set_retry (e, &once);
  g_assert_false (hz_egress_upload_release (e, r, NULL, &error));   /* nobody on port 9 */
  g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_NETWORK);
  g_clear_error (&error);
  g_autoptr (GPtrArray) log = hz_store_list_egress_log (store, 0, 0, &error);
  g_assert_cmpuint (log->len, ==, 1);
  g_assert_cmpstr (((HzEgressLogEntry *) log->pdata[0])->endpoint, ==,
                   "http://127.0.0.1:9/v1/rounds/1/update");
  hz_egress_free (e);
  hz_store_close (store);
  g_autofree char *db = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (db_path, &db, &len, NULL));
  g_assert_null (g_strstr_len (db, (gssize) len, "s3kr1t-t0ken-XYZ"));
  g_autofree char *wal_path = g_strconcat (db_path, "-wal", NULL);
  g_autofree char *wal = NULL;
  if (g_file_get_contents (wal_path, &wal, &len, NULL))
    g_assert_null (g_strstr_len (wal, (gssize) len, "s3kr1t-t0ken-XYZ"));

  /* clearing turns federation off */
  g_assert_true (hz_credentials_clear (NULL, &error));
  g_assert_false (hz_credentials_lookup (&endpoint, &token, NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND);
  g_clear_error (&error);
  HzStore *store2 = hzt_tmp_store ();
  g_assert_null (hz_egress_new_from_keyring (store2, cfg, NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND);
  hz_store_close (store2);
}

/* Hub access tokens: one per endpoint, independent of the federation item. */
static void
test_hub_token (void)
{
  if (!secret_service_reachable ())
    return;
  g_autoptr (GError) error = NULL;
  static const char hf[] = "https://huggingface.co", mirror[] = "https://hf-mirror.example";
  g_assert_true (hz_credentials_clear_hub_token (hf, NULL, &error));
  g_assert_true (hz_credentials_clear_hub_token (mirror, NULL, &error));
  g_assert_null (hz_credentials_lookup_hub_token (hf, NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (hz_credentials_store_hub_token (hf, "hf_a b", NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_true (hz_credentials_store_hub_token (hf, "hf_old", NULL, &error));
  g_assert_true (hz_credentials_store_hub_token (hf, "hf_0123456789abcdef", NULL, &error));
  g_assert_true (hz_credentials_store_hub_token (mirror, "hf_mirror", NULL, &error));
  g_assert_no_error (error);
  char *t = hz_credentials_lookup_hub_token (hf, NULL, &error);
  g_assert_cmpstr (t, ==, "hf_0123456789abcdef");   /* replaced */
  hz_credentials_free_token (t);
  t = hz_credentials_lookup_hub_token (mirror, NULL, &error);
  g_assert_cmpstr (t, ==, "hf_mirror");
  hz_credentials_free_token (t);
  /* the federation item is another thing */
  char *endpoint = NULL, *token = NULL;
  g_assert_false (hz_credentials_lookup (&endpoint, &token, NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_true (hz_credentials_clear_hub_token (hf, NULL, &error));
  g_assert_null (hz_credentials_lookup_hub_token (hf, NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND);
  g_clear_error (&error);
  t = hz_credentials_lookup_hub_token (mirror, NULL, &error);
  g_assert_cmpstr (t, ==, "hf_mirror");
  hz_credentials_free_token (t);

  /* after the Hub refused (401/403), a client without token takes the mirror's stored one;
   * not after another error, not when it had one, not when none is stored */
  g_autoptr (HzStore) store = hzt_tmp_store ();
  g_autoptr (HzHub) hub = hz_hub_new (mirror, NULL, store, &error);
  g_autoptr (HzHub) plain = hz_hub_new (hf, NULL, store, &error);
  g_assert_no_error (error);
  g_autoptr (GError) refused = g_error_new_literal (HZ_HUB_ERROR, HZ_HUB_ERROR_AUTH, "401");
  g_autoptr (GError) missing = g_error_new_literal (HZ_HUB_ERROR, HZ_HUB_ERROR_NOT_FOUND, "404");
  g_assert_false (hz_credentials_hub_token_after_refusal (hub, missing));
  g_assert_false (hz_hub_has_token (hub));
  g_assert_true (hz_credentials_hub_token_after_refusal (hub, refused));
  g_assert_true (hz_hub_has_token (hub));
  g_assert_false (hz_credentials_hub_token_after_refusal (hub, refused));   /* had one */
  g_assert_false (hz_credentials_hub_token_after_refusal (plain, refused));  /* none stored */
  g_assert_false (hz_hub_has_token (plain));
  g_clear_pointer (&hub, hz_hub_free);
  g_clear_pointer (&plain, hz_hub_free);
  g_assert_true (hz_credentials_clear_hub_token (mirror, NULL, &error));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress/credentials/store-lookup-clear", test_store_lookup_clear);
  g_test_add_func ("/egress/credentials/hub-token", test_hub_token);
  return g_test_run ();
}
