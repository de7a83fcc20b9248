/* hz-entity.c — the names of the entity types (hanzo/redact.h): HzEntityType <-> "PERSON", and
 * the aliases of other tools' labels ("EMAIL_ADDRESS", "GPE", ...). */
#include "hanzo/redact.h"

static const char *const type_names[HZ_ENTITY_N_TYPES] = {
  [HZ_ENTITY_NONE] = "NONE",
  [HZ_ENTITY_PERSON] = "PERSON",
  [HZ_ENTITY_EMAIL] = "EMAIL",
  [HZ_ENTITY_PHONE] = "PHONE",
  [HZ_ENTITY_CREDIT_CARD] = "CREDIT_CARD",
  [HZ_ENTITY_IBAN] = "IBAN",
  [HZ_ENTITY_IP_ADDRESS] = "IP_ADDRESS",
  [HZ_ENTITY_MAC_ADDRESS] = "MAC_ADDRESS",
  [HZ_ENTITY_URL] = "URL",
  [HZ_ENTITY_STREET_ADDRESS] = "STREET_ADDRESS",
  [HZ_ENTITY_LOCATION] = "LOCATION",
  [HZ_ENTITY_DATE_TIME] = "DATE_TIME",
  [HZ_ENTITY_US_SSN] = "US_SSN",
  [HZ_ENTITY_SECRET] = "SECRET",
  [HZ_ENTITY_NATIONAL_ID] = "NATIONAL_ID",
};

const char *
hz_entity_type_name (HzEntityType type)
{
  if ((int) type <= 0 || type >= HZ_ENTITY_N_TYPES)
    return "NONE";
  return type_names[type];
}

HzEntityType
hz_entity_type_from_name (const char *name)
{
  static const struct { const char *alias; HzEntityType t; } aliases[] = {
    { "EMAIL_ADDRESS", HZ_ENTITY_EMAIL }, { "PHONE_NUMBER", HZ_ENTITY_PHONE },
    { "IBAN_CODE", HZ_ENTITY_IBAN }, { "DOMAIN_NAME", HZ_ENTITY_URL },
    { "GPE", HZ_ENTITY_LOCATION }, { "ADDRESS", HZ_ENTITY_STREET_ADDRESS },
    { "ZIP_CODE", HZ_ENTITY_STREET_ADDRESS },
  };
  if (!name)
    return HZ_ENTITY_NONE;
  for (int t = 1; t < HZ_ENTITY_N_TYPES; t++)
    if (g_ascii_strcasecmp (name, type_names[t]) == 0)
      return t;
  for (gsize i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (g_ascii_strcasecmp (name, aliases[i].alias) == 0)
      return aliases[i].t;
  return HZ_ENTITY_NONE;
}
