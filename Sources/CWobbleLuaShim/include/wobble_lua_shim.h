int wobble_placeholder(void);
