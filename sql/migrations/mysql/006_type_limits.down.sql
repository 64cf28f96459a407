DROP TABLE type_limits;
